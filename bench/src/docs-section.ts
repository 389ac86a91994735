// Sections of the docs that are generated from committed results, never copied by hand: each lies
// between two markers, its generator rewrites what is between them, and a test holds the text there
// equal to what the results give. `npm run bench` writes docs/performance.md's from bench/results; the
// fault tests, recording, write docs/reliability.md's from test/reliability/results.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
export interface GeneratedSection {
  start: string;
  end: string;
}

/** The last bench run, as bench/results/latest.md holds it. */
export const BENCH_RESULTS: GeneratedSection = {
  start: '<!-- bench results: written by `npm run bench` from bench/results/latest.md; do not edit by hand -->',
  end: '<!-- end of bench results -->',
};

/** Every recorded bench run, one row each, from bench/results/history.jsonl (docs/performance-history.md). */
export const BENCH_HISTORY: GeneratedSection = {
  start: '<!-- bench history: written by `npm run bench` from bench/results/history.jsonl; do not edit by hand -->',
  end: '<!-- end of bench history -->',
};

/** The text between a section's markers, or undefined when the document has none. */
export function sectionOf(document: string, section: GeneratedSection): string | undefined {
  const start = document.indexOf(section.start);
  const end = document.indexOf(section.end);
  if (start < 0 || end < start) return undefined;
  return document.slice(start + section.start.length, end).trim();
}

/** The document with the text between a section's markers replaced by `text`. */
export function withSection(document: string, section: GeneratedSection, text: string): string {
  const start = document.indexOf(section.start);
  const end = document.indexOf(section.end);
  if (start < 0 || end < start) throw new Error(`the document has no ${section.start} ... ${section.end} section`);
  return `${document.slice(0, start + section.start.length)}\n\n${text.trim()}\n\n${document.slice(end)}`;
}

/**
 * Saves a paced scenario's results as `file` in `resultsDir`, writes its table into docs/performance.md's
 * section when the results went to the repository's own bench/results (a run elsewhere is a trial), and
 * prints the table.
 */
export function saveResults(options: {
  resultsDir: string;
  file: string;
  results: unknown;
  section: GeneratedSection;
  table: string;
}): void {
  const { resultsDir, file, results, section, table } = options;
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, file), `${JSON.stringify(results, null, 2)}\n`);
  const repoRoot = path.resolve(__dirname, '..', '..');
  if (path.resolve(resultsDir) === path.join(repoRoot, 'bench', 'results')) {
    const doc = path.join(repoRoot, 'docs', 'performance.md');
    writeFileSync(doc, withSection(readFileSync(doc, 'utf8'), section, table));
  }
  process.stdout.write(`\n${table}\n`);
}
