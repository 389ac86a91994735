// Sends each event to the webhooks that want it: a signed JSON POST (shared/events/webhook-signature.ts),
// delivered by any 2xx; anything else, or no answer in 5 s, is tried again after a pause that starts at
// WEBHOOK_FIRST_RETRY_AFTER and doubles up to 5 minutes, until WEBHOOK_RETRY_FOR after the event, when it
// is dropped. Sends run side by side, each on its own timeout. A webhook has at most MAX_SENDS_PER_WEBHOOK
// of them at once once its receiver has answered, one until then, and one again after a send of it went
// unanswered past SLOW_AFTER_MS or failed; and the processor's shared MAX_IN_FLIGHT counts only the sends
// not yet past SLOW_AFTER_MS. So however many receivers hang, each holds one send and no shared slot past
// a second, and they delay only their own events; the pending work is in PostgreSQL, so a restart loses
// none of it.
import http from 'node:http';
import https from 'node:https';
import type { Pool } from 'pg';
import type { Logger } from '@fleet/shared/logger';
import { privateLiteralOf, publicLookup } from '@fleet/shared/events/public-address';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, webhookSignature } from '@fleet/shared/events/webhook-signature';
import type { EventMetrics } from './metrics';
import { claimDue, forgetDelivery, retryLater, type Delivery } from './webhook-store';

export const SEND_TIMEOUT_MS = 5000;
/** Bytes of a receiver's answer read at most: only its status counts, and an endless body is cut off here. */
export const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_PAUSE_MS = 5 * 60_000;
/** Sends in flight at once and answered in time, per processor: those past SLOW_AFTER_MS are not counted. */
export const MAX_IN_FLIGHT = 128;
/**
 * A send unanswered this long no longer holds a shared slot, and its webhook is slow: the longest a
 * healthy receiver's event waits behind receivers that hang.
 */
export const SLOW_AFTER_MS = 1000;
/**
 * Sends in flight at once to one webhook, per processor: enough for a receiver answering in 10 ms to take
 * some 1,600 events a second, and few enough that receivers which never answer leave the others most of
 * MAX_IN_FLIGHT.
 */
export const MAX_SENDS_PER_WEBHOOK = 16;
/** How often due deliveries are looked for, besides when a batch has just made some: retries fall due unannounced. */
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
  const literal = allowPrivate ? undefined : privateLiteralOf(url);
  if (literal) return Promise.reject(new Error(`${url.host} is the private address ${literal}`));
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
        resolve(response.statusCode ?? 0);
        // Only the status counts: the body is read to keep the connection for the next delivery, up to
        // MAX_ANSWER_BYTES, past which the connection is closed rather than read for the whole timeout.
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) request.destroy();
        });
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
  /** Deliveries were just committed: look for them now rather than at the next poll. */
  due(): void;
  stop(): Promise<void>;
}

export function startWebhookDelivery(options: WebhookDeliveryOptions): RunningDelivery {
  const { pool, logger, metrics } = options;
  const inFlight = new Set<Promise<void>>();
  /** Sends in flight and not yet past SLOW_AFTER_MS: what MAX_IN_FLIGHT counts. */
  let answering = 0;
  /** Sends in flight by webhook id. */
  const sending = new Map<number, number>();
  /** Webhooks whose receivers answered their last send in time: MAX_SENDS_PER_WEBHOOK each; any other, one. */
  const answered = new Set<number>();
  /** Webhooks a claim gave all the sends they had room for: more of theirs may be due. */
  const capped = new Set<number>();
  /** The last claim took all the room this processor had: more may be due. */
  let filled = false;
  const agents: Agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let claiming: Promise<void> | undefined;
  /** A claim was asked for while one ran: the next runs as soon as it ends. */
  let claimAgain = false;

  async function send(delivery: Delivery): Promise<void> {
    let failure: string;
    try {
      const status = await postEvent(delivery, options.allowPrivate, agents);
      // It answered: whatever it said, it is not hanging.
      answered.add(delivery.webhookId);
      if (status >= 200 && status < 300) {
        await forgetDelivery(pool, delivery);
        metrics.delivery('delivered');
        return;
      }
      failure = `answered ${status}`;
    } catch (error) {
      failure = (error as Error).message;
      answered.delete(delivery.webhookId);
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

  /**
   * A send is done: claim again at once when the room it leaves is worth a query, i.e. the last claim
   * for its webhook gave all the room the webhook had (up to MAX_SENDS_PER_WEBHOOK), or the last claim
   * filled this processor to MAX_IN_FLIGHT, and half of that room is back.
   * Otherwise the next poll finds new work.
   */
  function ended(webhookId: number): void {
    const sends = (sending.get(webhookId) ?? 1) - 1;
    if (sends === 0) sending.delete(webhookId);
    else sending.set(webhookId, sends);
    if ((capped.has(webhookId) && sends <= MAX_SENDS_PER_WEBHOOK / 2) || (filled && answering <= MAX_IN_FLIGHT / 2)) {
      capped.delete(webhookId);
      filled = false;
      schedule(0);
    }
  }

  async function claim(): Promise<void> {
    if (stopped) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    claimAgain = false;
    const room = MAX_IN_FLIGHT - answering;
    // The sends in flight as the claim is made, which set each webhook's room in it.
    const sendingThen = new Map(sending);
    const answeringThen = new Set(answered);
    let claimed: Delivery[] = [];
    claiming = (async () => {
      if (room > 0) {
        claimed = await claimDue(pool, { limit: room, perWebhook: MAX_SENDS_PER_WEBHOOK, sending: sendingThen, answering: answeringThen });
      }
    })();
    try {
      await claiming;
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'could not look for webhook deliveries; trying again');
    } finally {
      claiming = undefined;
    }
    filled = room > 0 && claimed.length === room;
    const given = new Map<number, number>();
    for (const { webhookId } of claimed) given.set(webhookId, (given.get(webhookId) ?? 0) + 1);
    for (const [webhookId, count] of given) {
      const allowed = answeringThen.has(webhookId) ? MAX_SENDS_PER_WEBHOOK : 1;
      if (count === allowed - (sendingThen.get(webhookId) ?? 0)) capped.add(webhookId);
    }
    for (const delivery of claimed) {
      sending.set(delivery.webhookId, (sending.get(delivery.webhookId) ?? 0) + 1);
      answering += 1;
      let counted = true;
      const release = () => {
        if (!counted) return;
        counted = false;
        answering -= 1;
      };
      // Unanswered past SLOW_AFTER_MS: the slot is handed back and the webhook set aside.
      const slowTimer = setTimeout(() => {
        release();
        answered.delete(delivery.webhookId);
        if (filled) {
          filled = false;
          schedule(0);
        }
      }, SLOW_AFTER_MS);
      slowTimer.unref();
      const sent = send(delivery)
        .catch((error: Error) =>
          // Its lease runs out and it is sent again: at least once.
          logger.warn({ err: error.message, eventId: delivery.event.id }, 'could not record a webhook delivery'),
        )
        .finally(() => {
          clearTimeout(slowTimer);
          release();
          inFlight.delete(sent);
          ended(delivery.webhookId);
        });
      inFlight.add(sent);
    }
    schedule(claimAgain ? 0 : POLL_MS);
  }

  schedule(0);
  return {
    due: () => schedule(0),
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
