// The compiled services as real operating-system processes, for tests that kill, stop or crash them.
// Each service runs `node services/<name>/dist/main.js`, which the jest global setup has just built from
// the sources with `tsc -b`, with the Node.js flags of its deployment and the environment it is given;
// its JSON log lines are collected, and the port it listens on is read from them. A guard ends the service when the test process goes away, even by SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { serviceEntry, serviceNodeArgs, type ServiceName } from '../../deploy/local/src/service-node-args';
import { boundedWait } from './deadline';

export type { ServiceName };

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface ServiceProcess {
  name: ServiceName;
  /** The node process's own id (not the guard's). */
  pid: number;
  /** For the gateway, where it serves HTTP; for a writer, where it serves /metrics. */
  port: number;
  url: string;
  logs: LogLine[];
  /** Resolves with the exit code, or the signal's name, once the service has ended and its output is read. */
  exited: Promise<number | string>;
  isRunning(): boolean;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM (a graceful stop), then SIGKILL if the service has not ended within the deadline. */
  stop(deadlineMs?: number): Promise<number | string>;
  waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
}

const ROOT = path.resolve(__dirname, '../..');

/** The message each service logs once it is up, and the field holding its port. */
const startedLine: Record<ServiceName, { msg: string; port: string }> = {
  gateway: { msg: 'gateway listening', port: 'port' },
  'trip-writer': { msg: 'trip-writer consuming', port: 'metricsPort' },
  'group-writer': { msg: 'group-writer consuming', port: 'metricsPort' },
  'event-processor': { msg: 'event-processor consuming', port: 'metricsPort' },
  teltonika: { msg: 'Teltonika listener accepting devices', port: 'metricsPort' },
};

// The service's stdin is /dev/null; the guard keeps its own stdin (the test's pipe) on fd 3 and kills
// the service when that pipe closes, which happens however the test process ends.
const GUARD = [
  'exec 3<&0',
  'node "$@" </dev/null & service=$!',
  'echo "service-pid=$service"',
  '(cat <&3 >/dev/null; kill -KILL "$service" 2>/dev/null) >/dev/null 2>&1 &',
  'wait "$service"',
].join('\n');

/** bash reports a death by signal N as the exit code 128 + N. */
function statusOf(code: number | null, signal: NodeJS.Signals | null): number | string {
  if (code === 137) return 'SIGKILL';
  if (code === 143) return 'SIGTERM';
  return code ?? signal ?? 'unknown';
}

const started = new Set<ServiceProcess>();

const levelsHidingInfo = new Set(['silent', 'fatal', 'error', 'warn']);

/** Starts a compiled service and resolves once it has logged that it is up. */
export async function spawnService(name: ServiceName, env: NodeJS.ProcessEnv, startTimeoutMs = 90_000): Promise<ServiceProcess> {
  const main = path.join(ROOT, serviceEntry[name]);
  if (!existsSync(main)) throw new Error(`${main} is missing: the jest global setup builds it with "tsc -b"`);

  const child: ChildProcess = spawn('bash', ['-c', GUARD, 'guard', ...serviceNodeArgs(name), main], {
    cwd: ROOT,
    // The log level must let the start-up line through: the port is read from it.
    env: { PATH: process.env.PATH, ...env, LOG_LEVEL: levelsHidingInfo.has(env.LOG_LEVEL ?? 'silent') ? 'info' : env.LOG_LEVEL },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const stderr: string[] = [];
  const listeners = new Set<(line: LogLine) => void>();
  let servicePid = 0;
  let exitStatus: number | string | undefined;

  // 'close' rather than 'exit': it comes once the output is read to its end, so the logs are complete
  // when `exited` resolves.
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => {
      exitStatus = statusOf(code, signal);
      child.stdin?.end();
      resolve(exitStatus);
    });
  });
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    const pid = /^service-pid=(\d+)$/.exec(text);
    if (pid) {
      servicePid = Number(pid[1]);
      return;
    }
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    logs.push(line);
    for (const listener of listeners) listener(line);
  });

  function waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs = 15_000): Promise<LogLine> {
    const found = logs.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const done = (outcome: () => void) => {
        clearTimeout(timer);
        listeners.delete(listener);
        outcome();
      };
      const listener = (line: LogLine) => {
        if (match(line)) done(() => resolve(line));
      };
      const bound = boundedWait(timeoutMs);
      const limit = bound.byDeadline ? "at the test's deadline" : `after ${timeoutMs} ms`;
      const timer = setTimeout(() => done(() => reject(new Error(`${name}: timed out ${limit} waiting for ${what}`))), bound.ms);
      listeners.add(listener);
      void exited.then((status) =>
        done(() => reject(new Error(`${name} exited (${status}) while waiting for ${what}: ${describeFailure(logs, stderr)}`))),
      );
    });
  }

  const handle: ServiceProcess = {
    name,
    get pid() {
      return servicePid;
    },
    port: 0,
    url: '',
    logs,
    exited,
    isRunning: () => exitStatus === undefined,
    kill(signal) {
      if (!servicePid || exitStatus !== undefined) return;
      try {
        process.kill(servicePid, signal);
      } catch {
        // It ended between the check and the signal.
      }
    },
    async stop(deadlineMs = 15_000) {
      if (exitStatus !== undefined) return exitStatus;
      handle.kill('SIGTERM');
      const timer = setTimeout(() => handle.kill('SIGKILL'), deadlineMs);
      const status = await exited;
      clearTimeout(timer);
      started.delete(handle);
      return status;
    },
    waitForLog,
  };
  started.add(handle);

  try {
    const line = await waitForLog((entry) => entry.msg === startedLine[name].msg, 'its start-up line', startTimeoutMs);
    handle.port = Number(line[startedLine[name].port]);
    handle.url = `http://127.0.0.1:${handle.port}`;
  } catch (error) {
    handle.kill('SIGKILL');
    await exited;
    started.delete(handle);
    throw error;
  }
  return handle;
}

function describeFailure(logs: LogLine[], stderr: string[]): string {
  const fatal = logs.filter((line) => line.level >= 50).map((line) => line.msg);
  return [...fatal, ...stderr.slice(-5)].join(' | ') || 'no output';
}

/** Stops every service this test file started and has not stopped yet (for afterAll). */
export async function stopAllServices(): Promise<void> {
  await Promise.allSettled([...started].map((service) => service.stop(5000)));
  started.clear();
}
