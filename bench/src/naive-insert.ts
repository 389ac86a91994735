// Baseline 2: the design a team would write first — one express handler doing one INSERT per request
// straight into PostgreSQL, with no Kafka, no authentication and no batching.
import express from 'express';
import { Pool } from 'pg';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json());
app.post('/trip-location', async (req, res) => {
  const t = req.body;
  try {
    const result = await pool.query(
      `INSERT INTO trip_locations (imei, gps_time, latitude, longitude, speed, ignition)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [t.imei, t.gpsTime, t.latitude, t.longitude, t.speed, t.ignition],
    );
    res.json({ message: 'ok', data: { id: Number(result.rows[0].id), information: 'stored' } });
  } catch (error) {
    res.status(500).json({ message: (error as Error).message });
  }
});
const server = app.listen(Number(process.env.PORT ?? 0), () => {
  process.stdout.write(`listening ${JSON.stringify(server.address())}\n`);
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
