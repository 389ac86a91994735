// `npm start`'s launcher run compiled, as `npm start` runs it, for the tests of its supervision: its
// environment on a test's own topics and ports, its log lines as they come, and the services it runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { eventually } from './eventually';
import { TEST_API_KEY, TEST_JWT_SECRET, testServers } from './harness';

const root = path.resolve(__dirname, '..', '..');

export interface LauncherLine {
  msg: string;
  service?: string;
  [field: string]: unknown;
}

export interface Launcher {
  process: ChildProcess;
  /** Its log lines, parsed. */
  lines: LauncherLine[];
  /** Its lines as printed, for what JSON.parse would hide (a key twice). */
  raw: string[];
}

/**
 * A launcher's environment on the run's servers, these topics and this PORT; writers' metrics on free
 * ports, and the Teltonika listener left out (its device port is fixed; a test that wants it sets one).
 */
export function launcherEnv(prefix: string, port: number, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    PORT: String(port),
    TRIP_WRITER_METRICS_PORT: '0',
    GROUP_WRITER_METRICS_PORT: '0',
    EVENT_PROCESSOR_METRICS_PORT: '0',
    TELTONIKA_PORT: '0',
    TELTONIKA_METRICS_PORT: '0',
    DATABASE_URL: testServers().databaseUrl,
    REDIS_URL: testServers().redisUrl,
    KAFKA_BROKERS: testServers().kafkaBrokers,
    ...testServers().clientEnv,
    KAFKA_TOPIC_PREFIX: prefix,
    CACHE_KEY_PREFIX: `${prefix}:`,
    JWT_SECRET: TEST_JWT_SECRET,
    API_KEYS: TEST_API_KEY,
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    ...overrides,
  };
}

export const launcherScript = path.join(root, 'deploy/local/dist/start-stack.js');

/** The launcher's warnings and errors so far, its services' included, for the message of a failed start. */
function problems(launcher: Launcher): string {
  return launcher.lines
    .filter((line) => Number(line.level ?? 0) >= 40)
    .slice(-10)
    .map((line) => `${line.service ?? 'stack'}: ${line.msg}`)
    .join('\n');
}

/**
 * Starts a launcher and resolves once it says the stack is ready; fails as soon as it exits, or when it
 * is not ready in time, with what it logged of its trouble.
 */
export async function startLauncher(env: NodeJS.ProcessEnv): Promise<Launcher> {
  const child = spawn(process.execPath, [launcherScript], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const launcher: Launcher = { process: child, lines: [], raw: [] };
  createInterface({ input: child.stdout! }).on('line', (text) => {
    launcher.raw.push(text);
    try {
      launcher.lines.push(JSON.parse(text) as LauncherLine);
    } catch {
      // Not a log line.
    }
  });
  const exited = new Promise<never>((_resolve, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`the launcher exited (${code ?? signal}) before the stack was ready`))),
  );
  // Once the stack is ready, the launcher's exit is the test's business, not a failure of its start.
  exited.catch(() => undefined);
  try {
    await Promise.race([
      eventually(() => launcher.lines.find((line) => line.msg.startsWith('stack is ready')), 120_000, { what: 'the stack to be ready' }),
      exited,
    ]);
  } catch (error) {
    child.kill('SIGTERM');
    throw new Error(`${(error as Error).message}\n${problems(launcher)}`, { cause: error });
  }
  return launcher;
}

/** The services a launcher runs now: each process's service name and pid. */
export function launchedServices(launcher: Launcher): Array<{ name: string; pid: number }> {
  const pid = launcher.process.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  return children.filter(Boolean).flatMap((child) => {
    const match = /services\/([a-z-]+)\/dist\/main\.js/.exec(readFileSync(`/proc/${child}/cmdline`, 'utf8'));
    return match ? [{ name: match[1]!, pid: Number(child) }] : [];
  });
}
