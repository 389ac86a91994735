// Product categories in PostgreSQL: the read by id and the bulk upsert of an import.
import type { Pool } from 'pg';
import { inTransaction } from '@fleet/shared/db/transaction';
import type { Category } from './category.schema';
import type { CategoryFinder } from './get-category';
import type { CategoryWriter } from './import-categories';

/** A row as pg returns it: `numeric` arrives as a string to keep its precision. */
export interface CategoryRow {
  id: string;
  name: string;
  min_temperature: string | number | null;
  max_temperature: string | number | null;
}

function temperatureOf(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

export function toCategory(row: CategoryRow): Category {
  return {
    id: row.id,
    name: row.name,
    min_temperature: temperatureOf(row.min_temperature),
    max_temperature: temperatureOf(row.max_temperature),
  };
}

export async function findCategory(pool: Pool, id: string): Promise<Category | undefined> {
  const result = await pool.query<CategoryRow>({
    name: 'find-product-category',
    text: 'SELECT id, name, min_temperature, max_temperature FROM product_categories WHERE id = $1',
    values: [id],
  });
  const row = result.rows[0];
  return row ? toCategory(row) : undefined;
}

const UPSERT_BATCH = 1000;

/**
 * Inserts new categories and updates those whose fields differ, in one transaction. Returns the ids
 * that were inserted or changed: only those can be stale in a cache.
 */
export async function upsertCategories(pool: Pool, categories: readonly Category[]): Promise<string[]> {
  return inTransaction(pool, async (client) => {
    const changed: string[] = [];
    for (let start = 0; start < categories.length; start += UPSERT_BATCH) {
      const batch = categories.slice(start, start + UPSERT_BATCH);
      const result = await client.query<{ id: string }>(
        `INSERT INTO product_categories (id, name, min_temperature, max_temperature)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::numeric[], $4::numeric[])
         ON CONFLICT (id) DO UPDATE
           SET name = EXCLUDED.name,
               min_temperature = EXCLUDED.min_temperature,
               max_temperature = EXCLUDED.max_temperature,
               updated_at = now()
           WHERE (product_categories.name, product_categories.min_temperature, product_categories.max_temperature)
             IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.min_temperature, EXCLUDED.max_temperature)
         RETURNING id`,
        [
          batch.map((category) => category.id),
          batch.map((category) => category.name),
          batch.map((category) => category.min_temperature),
          batch.map((category) => category.max_temperature),
        ],
      );
      changed.push(...result.rows.map((row) => row.id));
    }
    return changed;
  });
}

/** The category reader's finder and the import's writer over this database. */
export function categoryStore(pool: Pool): CategoryFinder & CategoryWriter {
  return { findCategory: (id) => findCategory(pool, id), upsertCategories: (categories) => upsertCategories(pool, categories) };
}
