// Pages bounded in bytes as well as in rows. A row of some lists can be large (a position's attributes up
// to 16 KiB, a group of 10,000 vehicles, a polygon of 1,000 vertices), so a page of `limit` rows could
// run to tens or hundreds of MB, built whole in memory: a handful of such requests at once would exhaust
// a gateway's heap, and with it the writes it serves. A page therefore ends early once its rows reach
// PAGE_MAX_BYTES, with a cursor to the rest, and PostgreSQL sends only the rows such a page can hold.

/** About how many bytes of JSON a page holds at most (beyond its first row, which it always holds). */
export const PAGE_MAX_BYTES = 1024 * 1024;

/** A page's rows, and whether more follow them. */
export interface Slice<T> {
  items: T[];
  more: boolean;
}

/** The columns boundedByBytes adds to each row. */
export interface Weighed {
  page_weight: number;
  page_weight_before: number;
}

/**
 * Wraps a keyset page query (`inner`: ordered by `order`, LIMIT one more row than the page) so that it
 * answers only the rows a page of `budgetParameter` bytes can hold and the one after them (whether more
 * follow), each with its weight (`weight`: an SQL expression over the inner query's columns, about the
 * row's size as JSON) and the weight of the rows before it. cutPage makes the page of them.
 */
export function boundedByBytes({
  inner,
  weight,
  order,
  budgetParameter,
}: {
  inner: string;
  weight: string;
  order: string;
  budgetParameter: string;
}) {
  return `
  SELECT * FROM (
    SELECT weighed.*,
      (sum(page_weight) OVER (ORDER BY ${order} ROWS UNBOUNDED PRECEDING) - page_weight)::float8 AS page_weight_before,
      row_number() OVER (ORDER BY ${order}) AS page_row
    FROM (SELECT page.*, (${weight})::float8 AS page_weight FROM (${inner}) page) weighed
  ) counted
  WHERE page_row <= 2 OR page_weight_before <= ${budgetParameter}
  ORDER BY ${order}`;
}

/**
 * The page of rows a boundedByBytes query answered: at most `limit`, and after the first only while their
 * weights together stay within `budget`.
 */
export function cutPage<R extends Weighed>(rows: readonly R[], limit: number, budget = PAGE_MAX_BYTES): Slice<R> {
  let end = 0;
  while (end < rows.length && end < limit && (end === 0 || rows[end]!.page_weight_before + rows[end]!.page_weight <= budget)) end += 1;
  return { items: rows.slice(0, end), more: rows.length > end };
}
