// Where a live stream of several devices stands, as its events' ids carry it. Row ids are not committed
// in id order across devices (each trip-writer commits its own partitions' rows), so one id cannot say
// where such a stream stopped. Within one partition of the positions topic they are: each carries one
// partition of the trip topic (the same count, the same IMEI key), whose rows one writer stores batch
// after batch. So the cursor holds, per positions partition, the last row id sent, and the time the
// stream began, below which nothing is owed to it. An event's id is the cursor after it; a client that
// reconnects with it is sent, per partition, the rows committed after that id, and never one twice.

export interface StreamCursor {
  /** Epoch milliseconds: positions received before this were never owed to the stream. */
  since: number;
  /** The last row id sent, per positions partition. */
  lastIds: Map<number, number>;
  /** The row id every partition without an entry counts as sent up to: 0, or a plain id resumed. */
  floor: number;
}

const VERSION = 'c1';
/** How many partitions a cursor may name: ample for the topic's, bounded for a header a client sends. */
const MAX_PARTITIONS = 1024;

export function newCursor(since: number): StreamCursor {
  return { since, lastIds: new Map(), floor: 0 };
}

/** The last row id sent on a partition. */
export function sentUpTo(cursor: StreamCursor, partition: number): number {
  return cursor.lastIds.get(partition) ?? cursor.floor;
}

/** The cursor as an SSE id: `c1.<since>.<floor>.<partition>-<id>_...`, numbers in base 36. */
export function encodeCursor({ since, lastIds, floor }: StreamCursor): string {
  const parts = [...lastIds].sort(([a], [b]) => a - b).map(([partition, id]) => `${partition.toString(36)}-${id.toString(36)}`);
  return `${VERSION}.${since.toString(36)}.${floor.toString(36)}.${parts.join('_')}`;
}

const BASE36 = /^[0-9a-z]{1,12}$/;

function base36(text: string): number | undefined {
  if (!BASE36.test(text)) return undefined;
  const value = parseInt(text, 36);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * A cursor this service issued, undefined for any other text. A plain row id, as streams sent before
 * cursors, resumes every partition after it within `windowStart`.
 */
export function decodeCursor(text: string, windowStart: number): StreamCursor | undefined {
  const trimmed = text.trim();
  if (/^\d{1,18}$/.test(trimmed)) {
    const id = Number(trimmed);
    return Number.isSafeInteger(id) ? { since: windowStart, lastIds: new Map(), floor: id } : undefined;
  }
  const [version, sinceText, floorText, list, ...rest] = trimmed.split('.');
  if (version !== VERSION || sinceText === undefined || floorText === undefined || list === undefined || rest.length > 0) return undefined;
  const since = base36(sinceText);
  const floor = base36(floorText);
  if (since === undefined || floor === undefined) return undefined;
  const lastIds = new Map<number, number>();
  for (const entry of list === '' ? [] : list.split('_')) {
    const [partitionText, idText, ...extra] = entry.split('-');
    const partition = partitionText === undefined ? undefined : base36(partitionText);
    const id = idText === undefined ? undefined : base36(idText);
    if (partition === undefined || id === undefined || extra.length > 0 || lastIds.has(partition) || partition >= MAX_PARTITIONS) {
      return undefined;
    }
    lastIds.set(partition, id);
  }
  return { since, lastIds, floor };
}
