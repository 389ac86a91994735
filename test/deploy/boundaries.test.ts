// The house's boundaries are lint rules (eslint.config.mjs), part of `npm run lint`: each crossing a
// reviewer used to find by reading is refused here by the linter, at the file where it would be written,
// and the same import stays allowed where it belongs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

// ESLint loads its configuration as an ES module, which jest's module system cannot: the cases are
// linted in one node process of their own, through ESLint's API, as `npm run lint` lints the files.
const LINT_CASES = `
  const { ESLint } = require('eslint');
  const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
  const eslint = new ESLint({ cwd: process.cwd() });
  (async () => {
    const found = [];
    for (const { file, code } of cases) {
      const [result] = await eslint.lintText(code, { filePath: file });
      found.push(result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message));
    }
    process.stdout.write(JSON.stringify(found));
  })();`;

/** The boundary errors ESLint reports for each code written as its file. */
function crossingsOf(cases: Array<{ file: string; code: string }>): string[][] {
  const input = JSON.stringify(cases.map(({ file, code }) => ({ file: path.join(root, file), code: `${code}\nexport {};\n` })));
  // Under CI=true typescript-eslint assumes a single run over the files on disk and would lint those,
  // not the text given; each case is a file's text as it might be written.
  const env = { ...process.env, TSESTREE_SINGLE_RUN: 'false' };
  const run = spawnSync(process.execPath, ['-e', LINT_CASES], { cwd: root, env, input, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`linting the cases failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as string[][];
}

const refused: Array<[string, string, string]> = [
  ['a use case importing pg', 'services/gateway/src/positions/read-positions.ts', "import type { Pool } from 'pg';"],
  ['a use case importing kafkajs', 'services/gateway/src/vehicle-groups/create-vehicle-group.ts', "import type { Kafka } from 'kafkajs';"],
  ['a use case importing express', 'services/gateway/src/devices/register-device.ts', "import type { Request } from 'express';"],
  ['a use case importing ioredis', 'services/gateway/src/categories/get-category.ts', "import type { Redis } from 'ioredis';"],
  ['shared importing a service', 'shared/src/errors.ts', "import type { Gateway } from '@fleet/gateway';"],
  [
    'shared importing the write path',
    'shared/src/kafka/client.ts',
    "import type { CommandBus } from '@fleet/write-path/kafka/command-bus';",
  ],
  [
    'the write path importing a service',
    'shared/write-path/src/write-path.ts',
    "import type { Gateway } from '../../../services/gateway/src/start';",
  ],
  [
    'one service importing another',
    'services/gateway/src/http/app.ts',
    "import type { TeltonikaListener } from '../../../teltonika/src/start';",
  ],
  ['a service importing another by package', 'services/teltonika/src/start.ts', "import type { Gateway } from '@fleet/gateway';"],
  ['a writer importing another', 'services/trip-writer/src/start.ts', "import type { GroupWriter } from '@fleet/group-writer';"],
  [
    'product code importing the launcher',
    'services/gateway/src/start.ts',
    "import type { BrokerWatchdog } from '../../../deploy/local/src/broker-watchdog';",
  ],
];

const allowed: Array<[string, string, string]> = [
  ['a data-access file importing pg', 'services/gateway/src/positions/position-store.ts', "import type { Pool } from 'pg';"],
  ['a cache importing ioredis', 'services/gateway/src/categories/category-cache.ts', "import type { Redis } from 'ioredis';"],
  ['a feed importing kafkajs', 'services/gateway/src/streams/position-feed.ts', "import type { Kafka } from 'kafkajs';"],
  ['the HTTP edge importing express', 'services/gateway/src/http/app.ts', "import type { Request } from 'express';"],
  [
    'a service importing the write path',
    'services/teltonika/src/start.ts',
    "import type { CommandBus } from '@fleet/write-path/kafka/command-bus';",
  ],
  ['the write path importing shared', 'shared/write-path/src/write-path.ts', "import type { Logger } from '@fleet/shared/logger';"],
];

describe('the linter holds the boundaries of the house', () => {
  let found: Map<string, string[]>;
  beforeAll(() => {
    const cases = [...refused, ...allowed];
    const results = crossingsOf(cases.map(([, file, code]) => ({ file, code })));
    found = new Map(cases.map(([name], index) => [name, results[index]!]));
  }, 120_000);

  test.each(refused)('%s is refused', (name) => {
    expect(found.get(name)).toEqual([expect.stringContaining('import is restricted')]);
  });

  test.each(allowed)('%s is allowed', (name) => {
    expect(found.get(name)).toEqual([]);
  });
});
