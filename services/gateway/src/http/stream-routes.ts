// Live positions: GET /fleet/api/v1/positions/stream?imei=...&imei=... answers text/event-stream, one
// `position` event per committed position of the devices named, its id the row's. With Last-Event-ID
// the stream first replays what those devices stored after that id (received in the last hour, at most
// REPLAY_LIMIT), then goes on live with nothing missed or sent twice at the seam: per device, an event
// is sent only when its id is past the last one sent (a device's positions are stored in id order).
// A comment every 15 s keeps proxies from closing an idle stream; a client that reads too slowly is
// cut off once BUFFER_LIMIT bytes wait for it, rather than let the gateway's memory grow.
import type { Pool } from 'pg';
import { AppError, type PositionEvent } from '@fleet/shared';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf, type ScopeDeps } from '../auth/require-scope';
import type { GatewayMetrics } from '../metrics';
import { invalidParameter, parseImei } from '../positions/position-query';
import { POSITION_COLUMNS, toPosition, type PositionRow } from '../positions/position-store';
import { timestampsAsText } from '../positions/stored-time';
import type { PositionFeed } from '../streams/position-feed';
import { queryOf, type RouteHandlers } from './route-handler';

export const MAX_STREAM_DEVICES = 1000;
const KEEP_ALIVE_MS = 15_000;
/** Bytes waiting for a slow client before its stream is cut. */
const BUFFER_LIMIT = 1024 * 1024;
const REPLAY_LIMIT = 10_000;

/**
 * What a reconnecting stream missed. Bounded by receipt (the last hour) and by gpsTime (the last day)
 * so that only recent partitions are read.
 */
const REPLAY = `
  SELECT id, ${POSITION_COLUMNS}
  FROM trip_locations
  WHERE imei = ANY($1::text[]) AND id > $2
    AND received_at > now() - interval '1 hour' AND gps_time > now() - interval '1 day'
  ORDER BY id
  LIMIT ${REPLAY_LIMIT}`;

export interface StreamRoutesDeps extends ScopeDeps {
  feed: PositionFeed;
  pool: Pool;
  deviceClaim: string | undefined;
  maxStreams: number;
  metrics: GatewayMetrics;
}

export interface Streams {
  /** Ends every open stream (the gateway is stopping). */
  closeAll(): void;
}

function devicesOf(query: Record<string, unknown>): string[] {
  const raw = query.imei;
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.length === 0) throw invalidParameter('imei', 'name at least one device');
  if (values.length > MAX_STREAM_DEVICES) throw invalidParameter('imei', `at most ${MAX_STREAM_DEVICES} devices a stream`);
  return [...new Set(values.map((value) => parseImei(value)))];
}

function lastEventIdOf(header: string | string[] | undefined): number | undefined {
  if (header === undefined || Array.isArray(header)) return undefined;
  if (!/^\d{1,18}$/.test(header.trim())) throw invalidParameter('Last-Event-ID', 'must be the id of an event this stream sent');
  return Number(header.trim());
}

/** The stream route's handler, and the streams it has open. */
export function streamHandler(deps: StreamRoutesDeps): { handlers: Pick<RouteHandlers, 'streamPositions'>; streams: Streams } {
  const open = new Set<() => void>();
  const { metrics } = deps;

  const streamPositions: RouteHandlers['streamPositions'] = async (req, res) => {
    const imeis = devicesOf(queryOf(req));
    const device = deviceOf(verifiedTokenOf(res), deps.deviceClaim);
    if (device !== undefined && imeis.some((imei) => imei !== device)) {
      throw new AppError({ kind: 'deviceForbidden', detail: `a token bound to device ${device} may stream only that device` });
    }
    const after = lastEventIdOf(req.headers['last-event-id']);
    if (open.size >= deps.maxStreams) {
      throw new AppError({
        kind: 'tooManyStreams',
        detail: `this gateway serves ${deps.maxStreams} streams (MAX_STREAMS)`,
        retryAfterSeconds: 1,
      });
    }
    await deps.feed.ready();

    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(': positions as they are committed\n\n');
    const lastSent = new Map<string, number>();
    let replaying = true;
    const caughtUp: PositionEvent[] = [];
    let ended = false;

    // 'slow': the client let BUFFER_LIMIT bytes wait; 'failed': its replay could not be read. Either way
    // the connection is dropped rather than ended, so the client reconnects.
    const end = (reason?: 'slow' | 'failed') => {
      if (ended) return;
      ended = true;
      open.delete(end);
      unsubscribe();
      clearInterval(keepAlive);
      metrics.streamEnded(reason);
      if (reason) res.destroy();
      else res.end();
    };
    const send = (event: PositionEvent) => {
      if (ended || event.id <= (lastSent.get(event.imei) ?? after ?? 0)) return;
      lastSent.set(event.imei, event.id);
      res.write(`event: position\nid: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`);
      metrics.streamEventSent();
      if (res.writableLength > BUFFER_LIMIT) end('slow');
    };
    const unsubscribe = deps.feed.subscribe(imeis, (event) => (replaying ? caughtUp.push(event) : send(event)));
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    open.add(end);
    metrics.streamStarted();
    req.once('close', () => end());

    try {
      if (after !== undefined) {
        const missed = await deps.pool.query<PositionRow>({ text: REPLAY, values: [imeis, after], types: timestampsAsText });
        for (const row of missed.rows) send(toPosition(row));
      }
    } catch {
      // The replay could not be read: the client reconnects with the same Last-Event-ID and tries again.
      end('failed');
      return;
    }
    replaying = false;
    for (const event of caughtUp.sort((a, b) => a.id - b.id)) send(event);
  };

  return {
    handlers: { streamPositions },
    streams: {
      closeAll() {
        for (const end of [...open]) end();
      },
    },
  };
}
