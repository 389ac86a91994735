// Live positions: GET /fleet/api/v1/positions/stream?imei=...&imei=... answers text/event-stream, one
// `position` event per committed position of the devices named, its data the row as reads answer it,
// its id a cursor (stream-cursor.ts): per partition of the positions topic, the last row id sent. With
// Last-Event-ID the stream first replays what those devices committed after that cursor (received in
// the last REPLAY_WINDOW, late fixes of any day included, at most REPLAY_LIMIT rows and REPLAY_MAX_BYTES
// a connection), then goes on live with nothing missed or sent twice, however many devices it follows
// and however often it reconnects: per partition, an event is sent only when its id is past the last
// one sent there.
// The stream itself (keep-alive comments, slow clients cut off) is sse.ts's.
import { AppError } from '@fleet/shared/errors';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf, type ScopeDeps } from '../auth/require-scope';
import type { GatewayMetrics } from '../metrics';
import { invalidParameter, parseImei } from '../query-parameters';
import type { ReplayRequest } from '../positions/position-store';
import type { Slice } from '../page-bytes';
import type { PositionFeed } from '../streams/position-feed';
import { decodeCursor, encodeCursor, newCursor, sentUpTo, type StreamCursor } from '../streams/stream-cursor';
import { queryOf, type RouteHandlers } from './route-handler';
import type { EndReason, OpenStreams } from './sse';

export const MAX_STREAM_DEVICES = 1000;
/** How far back, by receipt, a reconnecting stream is sent what it missed. */
export const REPLAY_WINDOW_MS = 60 * 60 * 1000;

export interface StreamRoutesDeps extends ScopeDeps {
  feed: PositionFeed;
  /** The positions a reconnecting stream missed, at most REPLAY_LIMIT and REPLAY_MAX_BYTES, and whether more follow. */
  findMissed: (request: ReplayRequest) => Promise<Slice<PositionEvent>>;
  deviceClaim: string | undefined;
  metrics: GatewayMetrics;
}

function devicesOf(query: Record<string, unknown>): string[] {
  const raw = query.imei;
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.length === 0) throw invalidParameter('imei', 'name at least one device');
  if (values.length > MAX_STREAM_DEVICES) throw invalidParameter('imei', `at most ${MAX_STREAM_DEVICES} devices a stream`);
  return [...new Set(values.map((value) => parseImei(value)))];
}

function cursorOf(header: string | string[] | undefined, now: number): StreamCursor | undefined {
  if (header === undefined || Array.isArray(header)) return undefined;
  const cursor = decodeCursor(header, now - REPLAY_WINDOW_MS);
  if (!cursor) throw invalidParameter('Last-Event-ID', 'must be the id of an event this stream sent');
  return cursor;
}

/** The stream route's handler, opening its streams among the gateway's `open` ones. */
export function streamHandler(deps: StreamRoutesDeps, open: OpenStreams): Pick<RouteHandlers, 'streamPositions'> {
  const streamPositions: RouteHandlers['streamPositions'] = async (req, res) => {
    const imeis = devicesOf(queryOf(req));
    const token = verifiedTokenOf(res);
    const device = deviceOf(token, deps.deviceClaim);
    if (device !== undefined && imeis.some((imei) => imei !== device)) {
      throw new AppError({ kind: 'deviceForbidden', detail: `a token bound to device ${device} may stream only that device` });
    }
    const resumed = cursorOf(req.headers['last-event-id'], Date.now());
    await deps.feed.ready();

    const cursor = resumed ?? newCursor(Date.now());
    let replaying = resumed !== undefined;
    const caughtUp: Array<[PositionEvent, number]> = [];
    const send = (event: PositionEvent, partition: number) => {
      if (stream.ended || event.id <= sentUpTo(cursor, partition)) return;
      cursor.lastIds.set(partition, event.id);
      stream.send('position', encodeCursor(cursor), event);
    };
    const stream = open.open(req, res, token.subject, 'positions as they are committed', () =>
      deps.feed.subscribe(imeis, (event, partition) => (replaying ? caughtUp.push([event, partition]) : send(event, partition))),
    );
    const end = (reason?: EndReason) => stream.end(reason);

    if (!resumed) return;
    let missed: Slice<PositionEvent>;
    try {
      const partitions = imeis.map((imei) => deps.feed.partitionOf(imei));
      const receivedAfter = new Date(Math.max(resumed.since, Date.now() - REPLAY_WINDOW_MS));
      const afters = partitions.map((partition) => sentUpTo(resumed, partition));
      missed = await deps.findMissed({ imeis, afters, receivedAfter });
    } catch {
      // The replay could not be read: the client reconnects with the same Last-Event-ID and tries again.
      end('failed');
      return;
    }
    for (const event of missed.items) send(event, deps.feed.partitionOf(event.imei));
    if (missed.more) {
      // More was missed than one connection replays (REPLAY_LIMIT, REPLAY_MAX_BYTES): the client
      // reconnects from the last one sent.
      end();
      return;
    }
    replaying = false;
    for (const [event, partition] of caughtUp.sort(([a], [b]) => a.id - b.id)) send(event, partition);
  };

  return { streamPositions };
}
