// Baseline 1: the cheapest express server this machine can run. Every other rate is a ratio to it.
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(Number(process.env.PORT ?? 0), () => {
  process.stdout.write(`listening ${JSON.stringify(server.address())}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
