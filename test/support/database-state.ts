// What an injection could have done to the database, in a form that compares equal only when it did
// nothing: each table's identity and storage (a table dropped and created again, or truncated, gets new
// ones) and a checksum of the rows a test owns. Tables other tests write to at the same time are judged
// by the test's own rows, never by their counts.
import { db } from './harness';

export interface OwnRows {
  /** A query of the test's own rows; its parameters are values, never SQL. */
  text: string;
  values: unknown[];
}

export async function databaseState(tables: string[], own: Record<string, OwnRows>): Promise<Record<string, unknown>> {
  const identities = await db().query<{ relname: string; oid: number; relfilenode: number }>(
    `SELECT relname, oid::int, relfilenode::int FROM pg_class WHERE relkind IN ('r', 'p') AND relname = ANY($1) ORDER BY relname`,
    [tables],
  );
  const checksums: Record<string, unknown> = {};
  for (const [label, { text, values }] of Object.entries(own)) {
    const { rows } = await db().query<{ count: number; checksum: string | null }>(
      `SELECT count(*)::int AS count, md5(string_agg(owned::text, ',' ORDER BY owned::text)) AS checksum FROM (${text}) AS owned`,
      values,
    );
    checksums[label] = rows[0];
  }
  return { tables: identities.rows, own: checksums };
}
