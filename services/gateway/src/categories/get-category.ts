// The product category read: validate the id, answer from the cache, else from PostgreSQL (one query
// per id however many requests miss at once) and fill the cache. The result is the response body,
// serialised once, so a cache hit is sent as the bytes Redis returned.
import { z } from 'zod';
import { AppError } from '@fleet/shared/errors';
import { formatName, issueCode, receivedType } from '@fleet/shared/schemas/issue-wording';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { NOT_FOUND, type CategoryCache } from './category-cache';
import { categoryParamsSchema, type Category } from './category.schema';

/** The 400 of a category id that is not a UUID: the interface fixes its body, which has no `code`. */
export class CategoryIdError extends AppError {
  constructor(private readonly payload: Record<string, unknown>) {
    super({ kind: 'validationFailed', message: String(payload.message) });
  }

  override toJSON(): Record<string, unknown> {
    return this.payload;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * The section 7.1 body built from a zod error, with the codes and names of zod 3 it has always had
 * (invalid_string of validation uuid, where zod 4 says invalid_format of format guid). A type issue's
 * `received` is zod 3's name for the type given; for a failed string check, `expected` is the check's
 * name and `received` the value given, so every issue carries both.
 */
export function invalidIdBody(error: z.ZodError, input: unknown): Record<string, unknown> {
  const issues = error.issues.map((issue) => {
    const given = valueAt(input, issue.path);
    const expected =
      issue.code === 'invalid_type' ? issue.expected : issue.code === 'invalid_format' ? formatName(issue.format) : undefined;
    const received = issue.code === 'invalid_type' ? receivedType(given) : typeof given === 'string' ? given : typeOf(given);
    return {
      code: issueCode(issue),
      expected: expected ?? issueCode(issue),
      message: issue.message,
      path: issue.path.map(String),
      received,
    };
  });
  return {
    errors: z.flattenError(error).fieldErrors,
    errors_v2: { formatted: z.formatError(error), issues },
    message: 'Invalid product category id: it must be a UUID',
  };
}

/** Returns the id in lower case, the form PostgreSQL prints and the cache keys use. */
export function parseCategoryId(id: unknown): string {
  const parsed = categoryParamsSchema.safeParse({ id });
  if (!parsed.success) throw new CategoryIdError(invalidIdBody(parsed.error, { id }));
  return parsed.data.id.toLowerCase();
}

export function categoryBody(category: Category): string {
  return JSON.stringify({
    data: {
      id: category.id,
      name: category.name,
      min_temperature: category.min_temperature,
      max_temperature: category.max_temperature,
    },
  });
}

/** Where categories are stored (category-store.ts holds them in PostgreSQL). */
export interface CategoryFinder {
  findCategory(id: string): Promise<Category | undefined>;
}

export interface CategoryReaderDeps {
  categories: CategoryFinder;
  cache: CategoryCache;
}

export interface CategoryReader {
  /** The response body for the id; throws the 400, 404 or 503 AppError otherwise. */
  read(id: unknown): Promise<Buffer | string>;
}

export function createCategoryReader(deps: CategoryReaderDeps): CategoryReader {
  const loading = new Map<string, Promise<string | null>>();

  async function loadFromDatabase(id: string): Promise<string | null> {
    const category = await fromDatabase(() => deps.categories.findCategory(id));
    const body = category ? categoryBody(category) : null;
    deps.cache.set(id, body);
    return body;
  }

  function load(id: string): Promise<string | null> {
    let pending = loading.get(id);
    if (!pending) {
      pending = loadFromDatabase(id).finally(() => loading.delete(id));
      loading.set(id, pending);
    }
    return pending;
  }

  return {
    async read(rawId) {
      const id = parseCategoryId(rawId);
      let body: Buffer | string | null | typeof NOT_FOUND | undefined = await deps.cache.get(id);
      if (body === undefined) body = await load(id);
      if (body === null || body === NOT_FOUND) throw new AppError({ kind: 'categoryNotFound' });
      return body;
    },
  };
}
