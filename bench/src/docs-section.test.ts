import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_HISTORY, BENCH_RESULTS, sectionOf, withSection } from './docs-section';
import { readHistory, runsTable } from './history';
import { EVENTS_SECTION, eventsTable, type EventsRun } from './events-bench';
import { QUIET_FLEET_SECTION, quietFleetTable } from './quiet-fleet';
import { REPLICATION_SECTION, replicationTable, type ReplicationReport } from './replication';

const repoRoot = path.resolve(__dirname, '..', '..');
const read = (relative: string) => readFileSync(path.join(repoRoot, relative), 'utf8');

test('docs/performance.md shows the committed run exactly as bench/results/latest.md holds it', () => {
  expect(sectionOf(read('docs/performance.md'), BENCH_RESULTS)).toBe(read('bench/results/latest.md').trim());
});

test('docs/performance-history.md lists every recorded run, and only those, as bench/results/history.jsonl holds them', () => {
  const history = readHistory(path.join(repoRoot, 'bench', 'results', 'history.jsonl'));
  expect(history.length).toBeGreaterThan(0);
  expect(sectionOf(read('docs/performance-history.md'), BENCH_HISTORY)).toBe(runsTable(history));
});

test('docs/performance.md shows the committed quiet-fleet run exactly as bench/results/quiet-fleet.json gives it', () => {
  const report = JSON.parse(read('bench/results/quiet-fleet.json')) as Parameters<typeof quietFleetTable>[0];
  expect(sectionOf(read('docs/performance.md'), QUIET_FLEET_SECTION)).toBe(quietFleetTable(report));
});

test('the section is replaced between its markers and nothing else changes', () => {
  const document = `# Title\n\nbefore\n\n${BENCH_RESULTS.start}\n\nold table\n\n${BENCH_RESULTS.end}\n\nafter\n`;
  const updated = withSection(document, BENCH_RESULTS, '| new | table |\n');
  expect(sectionOf(updated, BENCH_RESULTS)).toBe('| new | table |');
  expect(updated.startsWith('# Title\n\nbefore\n\n')).toBe(true);
  expect(updated.endsWith(`${BENCH_RESULTS.end}\n\nafter\n`)).toBe(true);
  expect(() => withSection('no markers', BENCH_RESULTS, 'x')).toThrow();
});

test('docs/performance.md shows the committed events run exactly as bench/results/events.json gives it', () => {
  const run = JSON.parse(read('bench/results/events.json')) as EventsRun;
  expect(sectionOf(read('docs/performance.md'), EVENTS_SECTION)).toBe(eventsTable(run));
});

test('docs/performance.md shows the committed replication run exactly as bench/results/replication.json gives it', () => {
  const report = JSON.parse(read('bench/results/replication.json')) as ReplicationReport;
  expect(sectionOf(read('docs/performance.md'), REPLICATION_SECTION)).toBe(replicationTable(report));
});
