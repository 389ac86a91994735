// `npm run kafka:up` on a machine without Java or Maven: one line saying what to install, and a non-zero
// exit, rather than a stack trace. And the ports it cannot have: one another server holds, or another
// than the one its data directory's broker already runs on, are refused at once with one line. (Starting
// and stopping the broker is what every test run does through the same startLocalKafka; the CLI's own
// broker lives in the developer's .dev/kafka, which tests leave alone.)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, JAVA_TOOLS_HINT, startLocalKafka } from '../../deploy/local/src/apache-kafka';
import { startPrivateKafka, type PrivateKafka } from '../support/private-kafka';

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

describe('a port the development broker cannot have', () => {
  let broker: PrivateKafka;
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-kafka-port-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    broker = await startPrivateKafka();
  }, 150_000);
  afterAll(async () => {
    await broker?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('a port another server holds is refused at once, naming the port, and no broker is started', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    const dataDir = freshDir();
    try {
      await expect(startLocalKafka({ dataDir, port })).rejects.toThrow(
        new RegExp(`^cannot start Apache Kafka: port ${port} \\(its broker port\\) is in use by another process`),
      );
      expect(existsSync(path.join(dataDir, 'broker.pid'))).toBe(false);
    } finally {
      holder.close();
    }
  });

  test("another data directory's broker on the port is refused, not joined", async () => {
    const port = Number(broker.brokers[0]!.split(':')[1]);
    await expect(startLocalKafka({ dataDir: freshDir(), port, controllerPort: await freePort() })).rejects.toThrow(
      `port ${port} (its broker port) is in use by another process`,
    );
  });

  test('asking for another port while the data directory’s broker runs says at once where it runs', async () => {
    const port = Number(broker.brokers[0]!.split(':')[1]);
    const other = await freePort();
    await expect(startLocalKafka({ dataDir: broker.dataDir, port: other })).rejects.toThrow(
      `already runs on 127.0.0.1:${port} (pid ${broker.pid()}), not on port ${other}: use KAFKA_PORT=${port}`,
    );
  });

  test('the same data directory and port reuses the running broker', async () => {
    const port = Number(broker.brokers[0]!.split(':')[1]);
    const reused = await startLocalKafka({ dataDir: broker.dataDir, port });
    expect({ pid: reused.pid, startedHere: reused.startedHere }).toEqual({ pid: broker.pid(), startedHere: false });
  });
});
