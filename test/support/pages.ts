// Reading a paged list to its end as a client does, following nextCursor, with each page's size in bytes
// as it came over the wire.

export interface ReadPages<T> {
  /** Every item of every page, in the order received. */
  items: T[];
  /** Each page's body in bytes. */
  pageBytes: number[];
}

/**
 * GETs `url` (its query given, without a cursor), then each page after it with `cursor=` added, until
 * nextCursor is null. Any answer but 200 fails.
 */
export async function readEveryPage<T>(url: string, headers: Record<string, string>): Promise<ReadPages<T>> {
  const items: T[] = [];
  const pageBytes: number[] = [];
  let cursor: string | null = null;
  do {
    const response = await fetch(cursor === null ? url : `${url}&cursor=${encodeURIComponent(cursor)}`, { headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`a page answered ${response.status}: ${text.slice(0, 200)}`);
    pageBytes.push(Buffer.byteLength(text));
    const body = JSON.parse(text) as { data: T[]; nextCursor: string | null };
    items.push(...body.data);
    cursor = body.nextCursor;
  } while (cursor !== null);
  return { items, pageBytes };
}
