// The fault figures docs/reliability.md shows: each fault test's last recorded run, kept in
// test/reliability/results/fault-figures.json. A run of the fault tests with FAULT_FIGURES=record saves
// each test's row there and writes the table between the document's markers; a test holds the two equal,
// so the figures in the docs are a run's, never copied by hand.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sectionOf, withSection, type GeneratedSection } from '../../bench/src/docs-section';

const repoRoot = path.resolve(__dirname, '..', '..');
export const FIGURES_FILE = path.join(repoRoot, 'test', 'reliability', 'results', 'fault-figures.json');
export const RELIABILITY_DOC = path.join(repoRoot, 'docs', 'reliability.md');

export const FAULT_TABLE: GeneratedSection = {
  start:
    '<!-- fault figures: written by the fault tests run with FAULT_FIGURES=record, from test/reliability/results/fault-figures.json; do not edit by hand -->',
  end: '<!-- end of fault figures -->',
};

/** One row of the table: what one fault test saw in its last recorded run. */
export interface FaultRow {
  /** The row's letter, which the docs' notes refer to. */
  row: string;
  /** The test file's name, without .test.ts. */
  test: string;
  fault: string;
  recordedAt: string;
  sent: number | string;
  ok: number | string;
  unavailable: number | string;
  rows: number;
  duplicates: number;
  /** Seconds from the fault's end to the first new 200, and what else the test measured of it. */
  recover: string;
  /** Every figure the test printed, for whoever wants more than the table. */
  figures: Record<string, unknown>;
}

export function readFaultRows(file = FIGURES_FILE): FaultRow[] {
  if (!existsSync(file)) return [];
  return Object.values(JSON.parse(readFileSync(file, 'utf8')) as Record<string, FaultRow>);
}

export function faultTable(rows: readonly FaultRow[]): string {
  const sorted = [...rows].sort((a, b) => (a.row < b.row ? -1 : a.row > b.row ? 1 : 0));
  const header =
    '| # | fault | test | recorded (UTC) | sent | 200 | 503 | rows | dup | recover (s) |\n| --- | --- | --- | --- | --: | --: | --: | --: | --: | --- |';
  const lines = sorted.map((row) =>
    [
      row.row,
      row.fault,
      `\`${row.test}\``,
      row.recordedAt.slice(0, 16).replace('T', ' '),
      row.sent,
      row.ok,
      row.unavailable,
      row.rows,
      row.duplicates,
      row.recover,
    ]
      .map(String)
      .join(' | '),
  );
  return [header, ...lines.map((line) => `| ${line} |`)].join('\n');
}

/** Saves a test's row and rewrites the docs' table from every saved row. */
export function recordFaultRow(row: FaultRow, file = FIGURES_FILE, document = RELIABILITY_DOC): void {
  const saved = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, FaultRow>) : {};
  saved[row.row] = row;
  const ordered = Object.fromEntries(Object.entries(saved).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(file, `${JSON.stringify(ordered, null, 2)}\n`);
  writeFileSync(document, withSection(readFileSync(document, 'utf8'), FAULT_TABLE, faultTable(Object.values(ordered))));
}

/** The table as the document holds it now. */
export function documentedFaultTable(document = RELIABILITY_DOC): string | undefined {
  return sectionOf(readFileSync(document, 'utf8'), FAULT_TABLE);
}
