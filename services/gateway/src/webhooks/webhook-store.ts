// Webhooks in PostgreSQL. Deleting one deletes its pending deliveries with it (ON DELETE CASCADE).
import type { Pool } from 'pg';
import type { Webhook } from './webhook.schema';
import type { WebhookStore } from './webhooks';

interface WebhookRow {
  id: string;
  url: string;
  types: string[] | null;
}

const toWebhook = (row: WebhookRow): Webhook => ({ id: Number(row.id), url: row.url, types: row.types });

export function webhookStore(pool: Pool): WebhookStore {
  return {
    async add({ url, types, secret }) {
      const { rows } = await pool.query<WebhookRow>(
        'INSERT INTO webhooks (url, types, secret) VALUES ($1, $2, $3) RETURNING id, url, types',
        [url, types, secret],
      );
      return toWebhook(rows[0]!);
    },
    async find(id) {
      const { rows } = await pool.query<WebhookRow>('SELECT id, url, types FROM webhooks WHERE id = $1', [id]);
      return rows[0] && toWebhook(rows[0]);
    },
    async list(after, limit) {
      const { rows } = await pool.query<WebhookRow>('SELECT id, url, types FROM webhooks WHERE id > $1 ORDER BY id LIMIT $2', [
        after,
        limit,
      ]);
      return rows.map(toWebhook);
    },
    async remove(id) {
      const result = await pool.query('DELETE FROM webhooks WHERE id = $1', [id]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}
