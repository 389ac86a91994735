// Sends each event to the webhooks that want it: a signed JSON POST (shared/events/webhook-signature.ts),
// delivered by any 2xx; anything else, or no answer in 5 s, is tried again after a pause that starts at
// WEBHOOK_FIRST_RETRY_AFTER and doubles up to 5 minutes, until WEBHOOK_RETRY_FOR after the event, when it
// is dropped. Sends run side by side, each on its own timeout, so a slow receiver delays only its own
// events; the pending work is in PostgreSQL, so a restart loses none of it.
import http from 'node:http';
import https from 'node:https';
import type { Pool } from 'pg';
import type { Logger } from '@fleet/shared/logger';
import { publicLookup } from '@fleet/shared/events/public-address';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, webhookSignature } from '@fleet/shared/events/webhook-signature';
import type { EventMetrics } from './metrics';
import { claimDue, forgetDelivery, retryLater, type Delivery } from './webhook-store';

export const SEND_TIMEOUT_MS = 5000;
const MAX_PAUSE_MS = 5 * 60_000;
/** Sends in flight at once, per processor. */
const MAX_IN_FLIGHT = 64;
/** How often due deliveries are looked for while none are in hand. */
const POLL_MS = 1000;

export interface WebhookDeliveryOptions {
  pool: Pool;
  logger: Logger;
  metrics: EventMetrics;
  retryForMs: number;
  firstRetryAfterMs: number;
  allowPrivate: boolean;
}

/** The pause after a delivery's `attempt`th failure. */
export function retryPauseMs(attempt: number, firstRetryAfterMs: number): number {
  return Math.min(firstRetryAfterMs * 2 ** (attempt - 1), MAX_PAUSE_MS);
}

/** Connections kept open between deliveries to the same receiver, closed when the service stops. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/** POSTs the event; resolves with the status, rejects on a network error or after SEND_TIMEOUT_MS. */
export function postEvent(delivery: Delivery, allowPrivate: boolean, agents: Agents): Promise<number> {
  const body = JSON.stringify(delivery.event);
  const timestamp = Math.floor(Date.now() / 1000);
  const url = new URL(delivery.url);
  const secure = url.protocol === 'https:';
  const transport = secure ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        timeout: SEND_TIMEOUT_MS,
        agent: secure ? agents.https : agents.http,
        ...(allowPrivate ? {} : { lookup: publicLookup }),
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'User-Agent': 'fleet-webhooks',
          [EVENT_ID_HEADER]: String(delivery.event.id),
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: webhookSignature(delivery.secret, timestamp, body),
        },
      },
      (response) => {
        // The answer's body is not read beyond what arrives: only its status counts.
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error(`no answer in ${SEND_TIMEOUT_MS} ms`)), SEND_TIMEOUT_MS);
    request.once('close', () => clearTimeout(deadline));
    request.once('timeout', () => request.destroy(new Error(`no answer in ${SEND_TIMEOUT_MS} ms`)));
    request.once('error', reject);
    request.end(body);
  });
}

export interface RunningDelivery {
  stop(): Promise<void>;
}

export function startWebhookDelivery(options: WebhookDeliveryOptions): RunningDelivery {
  const { pool, logger, metrics } = options;
  const inFlight = new Set<Promise<void>>();
  const agents: Agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let claiming: Promise<void> | undefined;

  async function send(delivery: Delivery): Promise<void> {
    let failure: string;
    try {
      const status = await postEvent(delivery, options.allowPrivate, agents);
      if (status >= 200 && status < 300) {
        await forgetDelivery(pool, delivery);
        metrics.delivery('delivered');
        return;
      }
      failure = `answered ${status}`;
    } catch (error) {
      failure = (error as Error).message;
    }
    const pauseMs = retryPauseMs(delivery.attempt, options.firstRetryAfterMs);
    if (Date.now() + pauseMs - delivery.since > options.retryForMs) {
      await forgetDelivery(pool, delivery);
      metrics.delivery('dropped');
      logger.warn(
        { webhookId: delivery.webhookId, eventId: delivery.event.id, attempts: delivery.attempt, failure },
        'webhook delivery dropped',
      );
      return;
    }
    await retryLater(pool, delivery, pauseMs, failure);
    metrics.delivery('failed');
  }

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void claim(), ms);
    timer.unref();
  };

  async function claim(): Promise<void> {
    if (claiming || stopped) return;
    let claimed: Delivery[] = [];
    claiming = (async () => {
      claimed = await claimDue(pool, MAX_IN_FLIGHT - inFlight.size);
    })();
    try {
      await claiming;
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'could not look for webhook deliveries; trying again');
    } finally {
      claiming = undefined;
    }
    for (const delivery of claimed) {
      const sending = send(delivery)
        .catch((error: Error) =>
          // Its lease runs out and it is sent again: at least once.
          logger.warn({ err: error.message, eventId: delivery.event.id }, 'could not record a webhook delivery'),
        )
        .finally(() => {
          inFlight.delete(sending);
          // A free slot looks again at once when the last claim was full: there may be more due.
          if (claimed.length && inFlight.size === 0) schedule(0);
        });
      inFlight.add(sending);
    }
    schedule(inFlight.size >= MAX_IN_FLIGHT ? POLL_MS : claimed.length ? 0 : POLL_MS);
  }

  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await claiming?.catch(() => undefined);
      await Promise.allSettled([...inFlight]);
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
