// SQL for webhook deliveries. A due delivery is claimed by moving its next attempt a lease ahead, so
// that several processors never send it at once and one that dies mid-send leaves it to be sent again
// when the lease runs out (at least once). A delivered or dropped one is deleted.
import type { Pool } from 'pg';
import { EVENT_COLUMNS, fleetEvent, type EventRow, type FleetEvent } from '@fleet/shared/events/fleet-event';

/** Longer than a send's 5 s timeout, with room for a slow commit. */
const CLAIM_LEASE_S = 60;

export interface Delivery {
  webhookId: number;
  url: string;
  secret: string;
  /** Attempts made, this one included. */
  attempt: number;
  /** When the event was raised, in ms: retries stop WEBHOOK_RETRY_FOR after it. */
  since: number;
  event: FleetEvent;
}

// Each webhook offers its oldest due deliveries, up to the sends it may still start ($3 for a webhook
// whose receiver has answered, listed in $6; one for any other; less those this processor has in flight
// to it, listed in $4 and $5), and the oldest of those offers are claimed, up to $1 in all. A webhook
// whose receiver hangs is at its limit and offers none: the others' deliveries are claimed past its
// backlog, however long.
const CLAIM_DUE = `
  WITH due AS (
    SELECT d.webhook_id, d.event_id, d.next_attempt_at
    FROM webhooks w
    LEFT JOIN unnest($4::bigint[], $5::int[]) AS sending (webhook_id, sends) ON sending.webhook_id = w.id
    CROSS JOIN LATERAL (
      SELECT webhook_id, event_id, next_attempt_at FROM webhook_deliveries
      WHERE webhook_id = w.id AND next_attempt_at <= now()
      ORDER BY next_attempt_at LIMIT greatest(CASE WHEN w.id = ANY($6::bigint[]) THEN $3 ELSE 1 END - coalesce(sending.sends, 0), 0)
      FOR UPDATE SKIP LOCKED
    ) d
    ORDER BY d.next_attempt_at LIMIT $1
  ), claimed AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $2), attempts = d.attempts + 1
    FROM due WHERE d.webhook_id = due.webhook_id AND d.event_id = due.event_id
    RETURNING d.webhook_id, d.event_id, d.attempts, d.created_at AS since
  )
  SELECT c.webhook_id, c.attempts, c.since, w.url, w.secret,
         ${EVENT_COLUMNS.split(', ')
           .map((column) => `e.${column}`)
           .join(', ')}
  FROM claimed c JOIN webhooks w ON w.id = c.webhook_id JOIN events e ON e.id = c.event_id`;

export interface ClaimLimits {
  /** Deliveries to claim at most. */
  limit: number;
  /** Sends one webhook whose receiver answered (in `answering`) may have in flight from this processor; any other, one. */
  perWebhook: number;
  /** The webhooks whose receivers answer: the others are sent one event at a time. */
  answering: ReadonlySet<number>;
  /** Sends this processor has in flight, by webhook id. */
  sending: ReadonlyMap<number, number>;
}

export async function claimDue(pool: Pool, { limit, perWebhook, sending, answering }: ClaimLimits): Promise<Delivery[]> {
  const { rows } = await pool.query<EventRow & { webhook_id: string; attempts: number; since: Date; url: string; secret: string }>(
    CLAIM_DUE,
    [limit, CLAIM_LEASE_S, perWebhook, [...sending.keys()], [...sending.values()], [...answering]],
  );
  return rows.map((row) => ({
    webhookId: Number(row.webhook_id),
    url: row.url,
    secret: row.secret,
    attempt: row.attempts,
    since: row.since.getTime(),
    event: fleetEvent(row),
  }));
}

/** The delivery is done with: delivered, or dropped after its retries. */
export async function forgetDelivery(pool: Pool, delivery: Delivery): Promise<void> {
  await pool.query('DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2', [delivery.webhookId, delivery.event.id]);
}

export async function retryLater(pool: Pool, delivery: Delivery, pauseMs: number, error: string): Promise<void> {
  await pool.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $3), last_error = $4
     WHERE webhook_id = $1 AND event_id = $2`,
    [delivery.webhookId, delivery.event.id, pauseMs / 1000, error.slice(0, 500)],
  );
}
