// The bench's history: every full run appends its report as one line of bench/results/history.jsonl,
// and nothing rewrites a line, so a later run can be held against an earlier one: trip creates on the
// partitioned trip_locations against the last run before it was partitioned.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { BenchReport } from './run-bench';

export const HISTORY_FILE = 'history.jsonl';

/** The recorded runs, oldest first; none when there is no history yet. */
export function readHistory(file: string): BenchReport[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BenchReport);
}

export function appendHistory(file: string, report: BenchReport): void {
  appendFileSync(file, `${JSON.stringify(report)}\n`);
}

/**
 * The newest run at the same number of connections whose trip_locations was one table. A run recorded
 * before reports said how trip_locations was stored has no `volume`: every such run predates partitioning.
 */
export function lastRunBeforePartitioning(history: BenchReport[], connections: number): BenchReport | undefined {
  return history.filter((run) => run.settings.connections === connections && run.volume?.tripLocationsPartitioned !== true).at(-1);
}
