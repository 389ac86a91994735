// Use case: an app reads the events raised from its devices' positions, oldest first, a page at a time
// by id, filtered by device, type and gpsTime range. A token bound to one device reads only its own.
import { createHash } from 'node:crypto';
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { EVENT_TYPES, type EventType, type FleetEvent } from '@fleet/shared/events/fleet-event';
import { idCursor, invalidParameter, parseImei, parseLimit, parseTime, single } from '../query-parameters';

export interface EventFilter {
  /** Undefined: every device. */
  imeis?: string[];
  /** Undefined: every type. */
  types?: EventType[];
  from?: Date;
  to?: Date;
}

/** Where events are read (event-store.ts: PostgreSQL). */
export interface EventStore {
  /** Up to `limit` events past `after` that pass the filter, in id order. */
  list(filter: EventFilter, after: number, limit: number): Promise<FleetEvent[]>;
}

const cursors = idCursor('e');

/** What a page's cursor is bound to: the filters, however their values were ordered or repeated. */
const filterDigest = (filter: EventFilter) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        filter.imeis?.toSorted() ?? null,
        filter.types?.toSorted() ?? null,
        filter.from?.getTime() ?? null,
        filter.to?.getTime() ?? null,
      ]),
    )
    .digest('base64url')
    .slice(0, 16);

/** The values of a parameter that may be repeated. */
function valuesOf(query: Record<string, unknown>, name: string): string[] {
  const raw = query[name];
  if (raw === undefined) return [];
  const values = Array.isArray(raw) ? raw : [raw];
  if (!values.every((value): value is string => typeof value === 'string')) throw invalidParameter(name, 'must be a plain value');
  return values;
}

export function parseEventTypes(query: Record<string, unknown>): EventType[] | undefined {
  const types = valuesOf(query, 'type');
  const unknown = types.find((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) throw invalidParameter('type', `must be one of ${EVENT_TYPES.join(', ')}`);
  return types.length ? ([...new Set(types)] as EventType[]) : undefined;
}

/**
 * The devices a request may see: those it names, or all; for a token bound to `device`, that device
 * alone, and a 403 if it names another.
 */
export function visibleDevices(query: Record<string, unknown>, device: string | undefined, maxDevices: number): string[] | undefined {
  const named = valuesOf(query, 'imei');
  if (named.length > maxDevices) throw invalidParameter('imei', `at most ${maxDevices} devices`);
  const imeis = [...new Set(named.map((imei) => parseImei(imei)))];
  if (device === undefined) return imeis.length ? imeis : undefined;
  if (imeis.some((imei) => imei !== device)) {
    throw new AppError({ kind: 'deviceForbidden', detail: `a token bound to device ${device} may read only that device's events` });
  }
  return [device];
}

export const MAX_FILTER_DEVICES = 1000;

export function createEventReader(store: EventStore) {
  return {
    async page(query: Record<string, unknown>, device: string | undefined): Promise<{ data: FleetEvent[]; nextCursor: string | null }> {
      const filter: EventFilter = {
        imeis: visibleDevices(query, device, MAX_FILTER_DEVICES),
        types: parseEventTypes(query),
        from: parseTime('from', single(query, 'from')),
        to: parseTime('to', single(query, 'to')),
      };
      if (filter.from && filter.to && filter.from >= filter.to) throw invalidParameter('from', 'must be before to');
      const limit = parseLimit(single(query, 'limit'));
      const bound = filterDigest(filter);
      const after = cursors.decode(single(query, 'cursor'), bound);
      const found = await fromDatabase(() => store.list(filter, after, limit + 1));
      const data = found.slice(0, limit);
      return { data, nextCursor: found.length > limit ? cursors.encode(data.at(-1)!.id, bound) : null };
    },
  };
}

export type EventReader = ReturnType<typeof createEventReader>;
