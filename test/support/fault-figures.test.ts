import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FAULT_TABLE, documentedFaultTable, faultTable, readFaultRows, recordFaultRow, type FaultRow } from './fault-figures';

const row = (overrides: Partial<FaultRow>): FaultRow => ({
  row: 'a',
  test: 'broker-kill',
  fault: 'broker SIGKILLed',
  recordedAt: '2026-11-26T16:00:00.000Z',
  sent: 2000,
  ok: 300,
  unavailable: 1700,
  rows: 2000,
  duplicates: 0,
  recover: '1.7',
  figures: {},
  ...overrides,
});

test("docs/reliability.md's fault table is the saved figures' table, every row of it a recorded run", () => {
  const rows = readFaultRows();
  expect(rows.length).toBeGreaterThan(0);
  expect(documentedFaultTable()).toBe(faultTable(rows));
});

test("recording a row saves it and rewrites the document's table in row order, replacing that row's earlier run", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fault-figures-'));
  const file = path.join(dir, 'figures.json');
  const document = path.join(dir, 'doc.md');
  writeFileSync(document, `# Faults\n\n${FAULT_TABLE.start}\n${FAULT_TABLE.end}\n\nnotes\n`);

  recordFaultRow(row({ row: 'c', test: 'writer-crash' }), file, document);
  recordFaultRow(row({ row: 'a', ok: 250 }), file, document);
  recordFaultRow(row({ row: 'a', ok: 303 }), file, document);

  expect(readFaultRows(file).map(({ row: letter, ok }) => [letter, ok])).toEqual([
    ['a', 303],
    ['c', 300],
  ]);
  const table = documentedFaultTable(document)!.split('\n');
  expect(table.slice(2)).toEqual([
    '| a | broker SIGKILLed | `broker-kill` | 2026-11-26 16:00 | 2000 | 303 | 1700 | 2000 | 0 | 1.7 |',
    '| c | broker SIGKILLed | `writer-crash` | 2026-11-26 16:00 | 2000 | 300 | 1700 | 2000 | 0 | 1.7 |',
  ]);
  expect(readFileSync(document, 'utf8').endsWith(`${FAULT_TABLE.end}\n\nnotes\n`)).toBe(true);
});
