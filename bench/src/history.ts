// The bench's history: every full run appends its report as one line of bench/results/history.jsonl,
// and nothing rewrites a line, so a later run can be held against an earlier one: trip creates on the
// partitioned trip_locations against the last run before it was partitioned.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { BenchReport } from './bench-types';

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

const CREATE = 'trip create, JSON';
const HELLO = 'hello-world (baseline)';

/** A ratio to three significant figures, or a dash when a run lacks one side. */
function ratio(over: number | undefined, under: number | undefined): string {
  return over === undefined || under === undefined || under === 0 ? '–' : (over / under).toPrecision(3);
}

/**
 * One row a recorded run, oldest first: its host, the hello-world spread, the headline ratios and the
 * targets it met. Only runs whose report is in the history appear; figures from runs without one are
 * not kept anywhere in the docs.
 */
export function runsTable(history: BenchReport[]): string {
  const header =
    '| run (UTC) | host | broker | hello-world req/s | category / hello | trip req/s | trip / hello | trip / naive | trip p99 / hello p99 | gateway RSS MiB | targets met |\n' +
    '| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |';
  const rows = history.map((run) => {
    const scenario = (name: string) => run.scenarios.find((each) => each.name === name);
    const hello = scenario(HELLO);
    const create = scenario(CREATE);
    const helloRates = run.helloWorldRuns.length ? run.helloWorldRuns : [hello?.requestsPerSecond ?? 0];
    const spread = `${Math.round(Math.min(...helloRates)).toLocaleString('en-US')}–${Math.round(Math.max(...helloRates)).toLocaleString('en-US')}`;
    const met = run.targets.filter((target) => target.met).length;
    return [
      run.startedAt.slice(0, 16).replace('T', ' '),
      run.machine.cpuModel.startsWith('AMD') ? 'AMD' : run.machine.cpuModel.startsWith('Intel') ? 'Intel' : run.machine.cpuModel,
      run.broker.split(',')[0]!,
      spread,
      // Each scenario's ratio is to the hello-world run beside it, as the bench reported it.
      scenario('category read, warm cache')?.ratio.toPrecision(3) ?? '–',
      create ? Math.round(create.requestsPerSecond).toLocaleString('en-US') : '–',
      create?.ratio.toPrecision(3) ?? '–',
      ratio(create?.requestsPerSecond, scenario('naive INSERT per request')?.requestsPerSecond),
      ratio(create?.p99Ms, create?.baseline.p99Ms),
      String(run.peakRssMiB.gateway ?? '–'),
      `${met} of ${run.targets.length}`,
    ];
  });
  return [header, ...rows.map((cells) => `| ${cells.join(' | ')} |`)].join('\n');
}
