// Events: GET /fleet/api/v1/events, a page at a time; GET /fleet/api/v1/events/stream, Server-Sent Events
// as they are committed, `event: <type>`, `id:` the event's id. Ids grow in commit order, so a client
// that reconnects with Last-Event-ID is first sent what it missed (at most REPLAY_LIMIT a connection),
// then goes on live with nothing missed or sent twice, however many devices it follows. Both take
// `imei` and `type`, each repeatable; without `imei`, every device, which a token bound to one device
// may not ask for. The stream itself (keep-alive comments, slow clients cut off) is sse.ts's.
import type { FleetEvent } from '@fleet/shared/events/fleet-event';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf } from '../auth/require-scope';
import { MAX_FILTER_DEVICES, parseEventTypes, visibleDevices, type EventFilter, type EventReader, type EventStore } from '../events/events';
import type { GatewayMetrics } from '../metrics';
import { invalidParameter } from '../query-parameters';
import type { EventFeed } from '../streams/event-feed';
import { queryOf, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';
import type { EndReason, OpenStreams } from './sse';

/** Missed events sent per connection; a client that missed more reconnects from the last one sent. */
export const EVENT_REPLAY_LIMIT = 1000;

export interface EventRoutesDeps {
  reader: EventReader;
  store: EventStore;
  feed: EventFeed;
  deviceClaim: string | undefined;
  metrics: GatewayMetrics;
}

function lastEventIdOf(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const id = typeof header === 'string' && /^\d{1,18}$/.test(header) ? Number(header) : NaN;
  if (!Number.isSafeInteger(id)) throw invalidParameter('Last-Event-ID', 'must be the id of an event this stream sent');
  return id;
}

const passes = (filter: EventFilter) => (event: FleetEvent) =>
  (!filter.imeis || filter.imeis.includes(event.imei)) && (!filter.types || filter.types.includes(event.type));

/** The events routes' handlers, the stream's opened among the gateway's `open` streams. */
export function eventHandlers(deps: EventRoutesDeps, open: OpenStreams): Pick<RouteHandlers, 'listEvents' | 'streamEvents'> {
  const streamEvents: RouteHandlers['streamEvents'] = async (req, res) => {
    const query = queryOf(req);
    const token = verifiedTokenOf(res);
    const device = deviceOf(token, deps.deviceClaim);
    const filter: EventFilter = { imeis: visibleDevices(query, device, MAX_FILTER_DEVICES), types: parseEventTypes(query) };
    const resumed = lastEventIdOf(req.headers['last-event-id']);
    await deps.feed.ready();

    const wanted = passes(filter);
    let sentUpTo = resumed ?? deps.feed.position();
    let replaying = resumed !== undefined;
    const caughtUp: FleetEvent[] = [];
    const send = (event: FleetEvent) => {
      if (stream.ended || event.id <= sentUpTo) return;
      sentUpTo = event.id;
      if (wanted(event)) stream.send(event.type, event.id, event);
    };
    const stream = open.open(req, res, token.subject, 'events as they are committed', () =>
      deps.feed.subscribe((events) => {
        if (replaying) caughtUp.push(...events);
        else for (const event of events) send(event);
      }),
    );
    const end = (reason?: EndReason) => stream.end(reason);

    if (resumed === undefined) return;
    let missed: FleetEvent[];
    try {
      missed = await deps.store.list(filter, resumed, EVENT_REPLAY_LIMIT);
    } catch {
      // The client reconnects with the same Last-Event-ID and tries again.
      end('failed');
      return;
    }
    for (const event of missed) send(event);
    if (missed.length === EVENT_REPLAY_LIMIT) {
      end();
      return;
    }
    replaying = false;
    for (const event of caughtUp) send(event);
  };

  return {
    async listEvents(req, res) {
      sendJson(res, 200, await deps.reader.page(queryOf(req), deviceOf(verifiedTokenOf(res), deps.deviceClaim)));
    },
    streamEvents,
  };
}
