// `npm run kafka:up` on a machine without Java or Maven: one line saying what to install, and a non-zero
// exit, rather than a stack trace. (Starting and stopping the broker is what every test run does through
// the same startLocalKafka; the CLI's own broker lives in the developer's .dev/kafka, which tests leave alone.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JAVA_TOOLS_HINT } from '../../deploy/local/src/apache-kafka';

const root = path.resolve(__dirname, '..', '..');

test('kafka:up without Java and Maven on the PATH prints one line naming what to install and exits 1', () => {
  const emptyPath = mkdtempSync(path.join(os.tmpdir(), 'fleet-no-java-'));
  try {
    const result = spawnSync(process.execPath, [path.join(root, 'deploy/local/dist/kafka-cli.js'), 'up'], {
      env: { PATH: emptyPath },
      encoding: 'utf8',
    });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr: `${JAVA_TOOLS_HINT}\n`,
    });
  } finally {
    rmSync(emptyPath, { recursive: true, force: true });
  }
});
