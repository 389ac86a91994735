// The position reads: a device's last location, and a page of its history with the cursor of the next
// page. Served from PostgreSQL directly, not through Kafka; a database that cannot be reached is a 503
// the client may retry, as for a category.
import { coalesce } from '@fleet/shared/coalesce';
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { parseImei } from '../query-parameters';
import { encodeCursor, microsToIso, parseHistoryQuery } from './position-query';
import type { Position } from './position-store';
import type { Slice } from '../page-bytes';

export interface HistoryPage {
  data: HistoryPosition[];
  /** null on the last page. */
  nextCursor: string | null;
}

export interface PositionReader {
  lastLocation(imei: unknown): Promise<{ data: Position }>;
  history(imei: unknown, query: Record<string, unknown>): Promise<HistoryPage>;
}

export interface HistoryPageQuery {
  imei: string;
  from: Date;
  to: Date;
  /** Exact timestamp text of the last position already answered; absent on a first page. */
  after?: string;
  limit: number;
  /** With the positions stored as filtered, each carrying its reason. */
  includeFiltered: boolean;
}

/** A position of the history: with `filtered`, its reason, when it was stored as not fit to use. */
export type HistoryPosition = Position & { filtered?: string };

export interface StoredPosition {
  position: HistoryPosition;
  /** Its exact gpsTime in microseconds since the epoch, as stored (a JS Date keeps milliseconds only). */
  gpsTimeMicros: bigint;
}

/** Where positions are read from (position-store.ts reads them from PostgreSQL). */
export interface PositionFinder {
  /** The newest position of each device that has one. */
  findLastLocations(imeis: readonly string[]): Promise<Map<string, Position>>;
  /**
   * Up to `limit` positions of the device in [from, to) after `after`, oldest first, fewer when they
   * would pass PAGE_MAX_BYTES; and whether more follow.
   */
  findHistoryPage(query: HistoryPageQuery): Promise<Slice<StoredPosition>>;
}

export interface PositionReaderDeps {
  positions: PositionFinder;
  now?: () => Date;
}

export function createPositionReader(deps: PositionReaderDeps): PositionReader {
  const now = deps.now ?? (() => new Date());
  // The last locations asked for while a lookup is under way are looked up together, in one statement:
  // per device that costs PostgreSQL and this process a fraction of a statement each. A lookup starts
  // after the requests it serves arrived, so it sees every position committed before they were sent.
  const lastLocations = coalesce(async (imeis: string[]) => {
    const found = await deps.positions.findLastLocations([...new Set(imeis)]);
    return imeis.map((imei) => found.get(imei));
  });
  return {
    async lastLocation(rawImei) {
      const imei = parseImei(rawImei);
      const [position] = await fromDatabase(() => lastLocations([imei]));
      if (!position) throw new AppError({ kind: 'positionNotFound', detail: `no position of device ${imei} has been recorded` });
      return { data: position };
    },

    async history(rawImei, query) {
      const imei = parseImei(rawImei);
      const { from, to, limit, afterMicros, includeFiltered } = parseHistoryQuery(imei, query, now());
      const { items, more } = await fromDatabase(() =>
        deps.positions.findHistoryPage({
          imei,
          from,
          to,
          limit,
          includeFiltered,
          ...(afterMicros === undefined ? {} : { after: microsToIso(afterMicros) }),
        }),
      );
      const last = items.at(-1);
      const nextCursor =
        more && last ? encodeCursor({ imei, fromMs: from.getTime(), toMs: to.getTime(), afterMicros: last.gpsTimeMicros }) : null;
      return { data: items.map((row) => row.position), nextCursor };
    },
  };
}
