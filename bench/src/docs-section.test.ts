import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RESULTS_END, RESULTS_START, resultsSection, withResults } from './docs-section';

const repoRoot = path.resolve(__dirname, '..', '..');
const read = (relative: string) => readFileSync(path.join(repoRoot, relative), 'utf8');

test('docs/performance.md shows the committed run exactly as bench/results/latest.md holds it', () => {
  expect(resultsSection(read('docs/performance.md'))).toBe(read('bench/results/latest.md').trim());
});

test('the section is replaced between its markers and nothing else changes', () => {
  const document = `# Title\n\nbefore\n\n${RESULTS_START}\n\nold table\n\n${RESULTS_END}\n\nafter\n`;
  const updated = withResults(document, '| new | table |\n');
  expect(resultsSection(updated)).toBe('| new | table |');
  expect(updated.startsWith('# Title\n\nbefore\n\n')).toBe(true);
  expect(updated.endsWith(`${RESULTS_END}\n\nafter\n`)).toBe(true);
  expect(() => withResults('no markers', 'x')).toThrow();
});
