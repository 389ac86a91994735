// Webhooks in PostgreSQL. Deleting one deletes its pending deliveries with it (ON DELETE CASCADE).
import type { Pool } from 'pg';
import { inTransactionAlone } from '@fleet/shared/db/transaction';
import type { Webhook } from './webhook.schema';
import type { WebhookStore } from './webhooks';

interface WebhookRow {
  id: string;
  url: string;
  types: string[] | null;
}

/** The key of the advisory lock that serializes webhook creates (any number no other lock uses). */
const WEBHOOK_CREATE_LOCK = 0x7765_6268;

// Stores the webhook only while fewer than $4 are stored, and answers how many were, with the new row
// when it was stored.
const ADD_WITHIN_LIMIT = `
  WITH stored AS (SELECT count(*)::int AS webhooks FROM webhooks),
  added AS (
    INSERT INTO webhooks (url, types, secret) SELECT $1, $2, $3 FROM stored WHERE stored.webhooks < $4
    RETURNING id, url, types
  )
  SELECT stored.webhooks, added.* FROM stored LEFT JOIN added ON true`;

const toWebhook = (row: WebhookRow): Webhook => ({ id: Number(row.id), url: row.url, types: row.types });

export function webhookStore(pool: Pool): WebhookStore {
  return {
    async add({ url, types, secret }, limit) {
      return inTransactionAlone(pool, WEBHOOK_CREATE_LOCK, async (client) => {
        const { rows } = await client.query<{ webhooks: number } & Partial<WebhookRow>>(ADD_WITHIN_LIMIT, [url, types, secret, limit]);
        const row = rows[0]!;
        if (row.id === null || row.id === undefined) return { stored: row.webhooks };
        return { webhook: toWebhook(row as WebhookRow) };
      });
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
