// Reading a category import file: a JSON array of objects, or CSV with a header row
// (id,name,min_temperature,max_temperature). The rows come out unvalidated; the import validates them.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/** CSV records as objects keyed by the header row's (trimmed) names; a record of the wrong width is an error. */
export function csvToRows(text: string): Record<string, string>[] {
  try {
    return parse(text, {
      bom: true,
      columns: (header: string[]) => header.map((name) => name.trim()),
      record_delimiter: ['\r\n', '\n'],
      skip_empty_lines: true,
    }) as Record<string, string>[];
  } catch (error) {
    throw new Error(`invalid CSV: ${(error as Error).message}`, { cause: error });
  }
}

export function parseCategoryFile(text: string, format: 'json' | 'csv'): unknown[] {
  if (format === 'csv') return csvToRows(text);
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error('a JSON import must be an array of categories');
  return parsed;
}

export async function readCategoryFile(file: string): Promise<unknown[]> {
  const extension = path.extname(file).toLowerCase();
  if (extension !== '.json' && extension !== '.csv') throw new Error(`${file}: expected a .json or .csv file`);
  const text = await readFile(file, 'utf8');
  try {
    return parseCategoryFile(text, extension === '.csv' ? 'csv' : 'json');
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
  }
}
