// A Kafka-protocol broker for development and tests: librdkafka's in-memory mock cluster, served by
// Debian's kcat. It keeps nothing on disk and its ports change on every start. Production runs Apache
// Kafka; nothing outside this file knows the difference.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { waitAtMost } from '../deadline';

export interface DevBroker {
  brokers: string[];
  /** The kcat process id, for fault injection (SIGSTOP/SIGCONT). */
  pid: number;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export interface DevBrokerOptions {
  brokerCount?: number;
  /** Extra latency per broker round trip, to simulate a slow broker. */
  rttMs?: number;
}

/**
 * Client settings the mock cluster needs, where it differs from Kafka:
 * - it holds every empty fetch for the full wait instead of answering when data arrives, so the wait
 *   adds itself to every hop of a request: 3 ms, against 5 ms before, took trip creates from ~2,300 to
 *   ~3,300 a second at 64 connections with the gateway's linger at its production default of 5 ms;
 * - it keeps a member that left its group until the member's session expires, so a short session
 *   keeps rebalances (a writer restarting, a second writer joining) from stalling for 30 s.
 */
export const devBrokerClientEnv = {
  KAFKA_FETCH_MAX_WAIT_MS: '3',
  KAFKA_SESSION_TIMEOUT_MS: '6000',
} as const;

export const KCAT_INSTALL_HINT =
  'kcat is not installed. Install it with: sudo apt-get install -y kcat  (Debian/Ubuntu), or set KAFKA_BROKERS to a running Kafka.';

export function kcatAvailable(): boolean {
  return spawnSync('kcat', ['-V'], { stdio: 'ignore' }).status === 0;
}

export async function startDevBroker(options: DevBrokerOptions = {}): Promise<DevBroker> {
  if (!kcatAvailable()) throw new Error(KCAT_INSTALL_HINT);
  const args = ['-X', `test.mock.num.brokers=${options.brokerCount ?? 3}`, '-X', 'debug=mock'];
  if (options.rttMs) args.push('-X', `test.mock.broker.rtt=${options.rttMs}`);
  args.push('-C', '-t', '__dev_broker_keepalive', '-b', 'localhost:0', '-q');

  // A small shell guard ends kcat when its stdin closes, so the broker dies with its parent even
  // when the parent is killed with SIGKILL and cannot clean up.
  const guard = 'kcat "$@" 2>&1 >/dev/null & k=$!; echo "kcat-pid=$k"; trap "kill -CONT $k 2>/dev/null; kill $k 2>/dev/null" EXIT; cat >/dev/null';
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
  return {
    brokers,
    pid,
    pause: () => process.kill(pid, 'SIGSTOP'),
    resume: () => process.kill(pid, 'SIGCONT'),
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin?.end();
      await waitAtMost(exited, 3000);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
