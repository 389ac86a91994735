// Importing product categories (the spec has no write operation for them): validate every row, upsert
// by id, then evict the inserted or changed ids from the cache so reads see the new values at once.
// Used by `npm run categories -- import` and by the local launcher to seed development data.
import { categoryRowSchema, type Category } from './category.schema';

export class CategoryImportError extends Error {
  override name = 'CategoryImportError';

  constructor(readonly problems: string[]) {
    super(`invalid categories: ${problems.slice(0, 20).join('; ')}${problems.length > 20 ? `; and ${problems.length - 20} more` : ''}`);
  }
}

/** Validates every row (numbered from 1) and rejects an id given twice, reporting all problems at once. */
export function validateCategoryRows(rows: readonly unknown[]): Category[] {
  const problems: string[] = [];
  const categories: Category[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const parsed = categoryRowSchema.safeParse(row);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push(`row ${index + 1}: ${issue.path.join('.') || 'row'}: ${issue.message}`);
      return;
    }
    const first = seen.get(parsed.data.id);
    if (first !== undefined) {
      problems.push(`row ${index + 1}: id: ${parsed.data.id} is already given in row ${first}`);
      return;
    }
    seen.set(parsed.data.id, index + 1);
    categories.push(parsed.data);
  });
  if (problems.length > 0) throw new CategoryImportError(problems);
  return categories;
}

export interface ImportResult {
  /** Rows in the input. */
  total: number;
  /** Ids inserted or changed; the others were already stored as given. */
  changed: string[];
  /** False when the cache could not be reached: its stale entries expire within the cache TTL. */
  cacheEvicted: boolean;
}

/** Where categories are stored (category-store.ts: PostgreSQL). */
export interface CategoryWriter {
  /** Inserts or updates each category; resolves with the ids inserted or changed. */
  upsertCategories(categories: readonly Category[]): Promise<string[]>;
}

/** The cache the reads fill (category-cache.ts: Redis), from which changed categories are evicted. */
export interface CategoryEvictor {
  evict(ids: readonly string[]): Promise<void>;
}

export interface CategoryImportDeps {
  store: CategoryWriter;
  /** Undefined when the cache could not be reached at all. */
  cache: CategoryEvictor | undefined;
}

export async function importCategories(deps: CategoryImportDeps, rows: readonly unknown[]): Promise<ImportResult> {
  const categories = validateCategoryRows(rows);
  const changed = await deps.store.upsertCategories(categories);
  let cacheEvicted = deps.cache !== undefined;
  if (deps.cache && changed.length > 0) {
    try {
      await deps.cache.evict(changed);
    } catch {
      cacheEvicted = false;
    }
  }
  return { total: categories.length, changed, cacheEvicted };
}
