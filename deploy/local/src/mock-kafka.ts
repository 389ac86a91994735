// The fallback broker for a machine without Java: librdkafka's in-memory mock cluster, served by Debian's
// kcat. It keeps nothing on disk and its ports change on every start. Everything else runs on Apache
// Kafka (apache-kafka.ts); what the mock needs differently is client configuration, listed below.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

export interface MockKafka {
  brokers: string[];
  /** The kcat process id, for fault injection (SIGSTOP/SIGCONT). */
  pid: number;
  /** kcat's version, which names the librdkafka that serves the mock. */
  version: string;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export interface MockKafkaOptions {
  brokerCount?: number;
  /** Extra latency per broker round trip, to simulate a slow broker. */
  rttMs?: number;
}

/**
 * Client settings the mock cluster needs, where it differs from Kafka:
 * - it holds every empty fetch for the full wait instead of answering when data arrives, so the wait
 *   adds itself to every hop of a request;
 * - it keeps a member that left its group until the member's session expires, so a short session
 *   keeps rebalances (a writer restarting, a second writer joining) from stalling for 30 s;
 * - it cannot create topics on request, only on a client's first use.
 */
export const mockKafkaClientEnv = {
  KAFKA_FETCH_MAX_WAIT_MS: '3',
  KAFKA_SESSION_TIMEOUT_MS: '6000',
  KAFKA_AUTO_CREATE_TOPICS: 'true',
} as const;

export const KCAT_INSTALL_HINT =
  'kcat is not installed. Install it with: sudo apt-get install -y kcat  (Debian/Ubuntu), or set KAFKA_BROKERS to a running Kafka.';

export function kcatAvailable(): boolean {
  return spawnSync('kcat', ['-V'], { stdio: 'ignore' }).status === 0;
}

export async function startMockKafka(options: MockKafkaOptions = {}): Promise<MockKafka> {
  if (!kcatAvailable()) throw new Error(KCAT_INSTALL_HINT);
  const args = ['-X', `test.mock.num.brokers=${options.brokerCount ?? 3}`, '-X', 'debug=mock'];
  if (options.rttMs) args.push('-X', `test.mock.broker.rtt=${options.rttMs}`);
  args.push('-C', '-t', '__dev_broker_keepalive', '-b', 'localhost:0', '-q');

  // A small shell guard ends kcat when its stdin closes, so the broker dies with its parent even
  // when the parent is killed with SIGKILL and cannot clean up.
  const guard =
    'kcat "$@" 2>&1 >/dev/null & k=$!; echo "kcat-pid=$k"; trap "kill -CONT $k 2>/dev/null; kill $k 2>/dev/null" EXIT; cat >/dev/null';
  // Detached into its own process group, so a Ctrl-C in the terminal reaches the services first and the
  // broker outlives them until they have disconnected cleanly.
  const child: ChildProcess = spawn('bash', ['-c', guard, 'kcat', ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  });

  const { brokers, pid } = await new Promise<{ brokers: string[]; pid: number }>((resolve, reject) => {
    let kcatPid = 0;
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('kcat did not report its mock cluster within 10 s')), 10_000);
    child.once('exit', (code) => reject(new Error(`kcat exited early with code ${code}`)));
    lines.on('line', (line) => {
      const pidMatch = /^kcat-pid=(\d+)/.exec(line);
      if (pidMatch) kcatPid = Number(pidMatch[1]);
      const match = /bootstrap\.servers=(\S+)/.exec(line);
      if (match && kcatPid) {
        clearTimeout(timer);
        resolve({ brokers: match[1]!.split(','), pid: kcatPid });
      }
    });
    // The mock's debug output never stops; it is drained so that kcat never blocks on a full pipe.
  });

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const version = /kcat - .*?version (\S+)/.exec(spawnSync('kcat', ['-V'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? 'unknown';
  return {
    brokers,
    pid,
    version,
    pause: () => process.kill(pid, 'SIGSTOP'),
    resume: () => process.kill(pid, 'SIGCONT'),
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin?.end();
      await Promise.race([exited, sleep(3000, undefined, { ref: false })]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
