// A broker JVM as a process of this machine: started detached or tied to this process, known by the pid
// in its pid file, and stopped with SIGTERM (a controlled shutdown), then SIGKILL.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const STOP_GRACE_MS = 20_000;

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * A JVM's MBeans on 127.0.0.1:port (registry and objects on the one port), for Kafka's JmxTool: the
 * benchmark reads the broker's request counts by API from them. Unauthenticated, so loopback only.
 */
export function jmxFlags(port: number | undefined): string[] {
  if (port === undefined) return [];
  return [
    '-Dcom.sun.management.jmxremote',
    `-Dcom.sun.management.jmxremote.port=${port}`,
    `-Dcom.sun.management.jmxremote.rmi.port=${port}`,
    '-Dcom.sun.management.jmxremote.host=127.0.0.1',
    '-Djava.rmi.server.hostname=127.0.0.1',
    '-Dcom.sun.management.jmxremote.authenticate=false',
    '-Dcom.sun.management.jmxremote.ssl=false',
  ];
}

export async function stopPid(pid: number, pidFile: string): Promise<void> {
  if (isAlive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + STOP_GRACE_MS;
    while (isAlive(pid) && Date.now() < deadline) await sleep(100);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await sleep(50);
  }
  if (readPid(pidFile) === pid) rmSync(pidFile, { force: true });
}

export interface SpawnedBroker {
  pid: number;
  /** True once the JVM (or its guard) has exited. */
  exited(): boolean;
  /** Lets a tied broker go: closing the guard's pipe ends the JVM. */
  release(): void;
}

/**
 * Starts a broker's JVM, its console log appended to logPath. `tied`: a shell guard holds this process's
 * pipe and ends the JVM when the pipe closes, which happens however this process ends, SIGKILL included.
 */
export async function spawnBroker(java: string[], logPath: string, tied: boolean): Promise<SpawnedBroker> {
  const logFile = openSync(logPath, 'a');
  let exited = false;
  try {
    if (!tied) {
      const child = spawn(java[0]!, java.slice(1), { stdio: ['ignore', logFile, logFile], detached: true });
      child.once('exit', () => (exited = true));
      child.unref();
      return { pid: child.pid!, exited: () => exited, release: () => undefined };
    }
    // The JVM's console log goes to the log file (>&2): the pipe back here is read for the pid alone, and
    // a full pipe would block the broker's logging, and with it the broker.
    const guard = '"$@" >&2 & k=$!; echo "$k"; trap "kill -CONT $k 2>/dev/null; kill $k 2>/dev/null" EXIT; cat >/dev/null';
    const child = spawn('bash', ['-c', guard, 'guard', ...java], { stdio: ['pipe', 'pipe', logFile], detached: true });
    child.once('exit', () => (exited = true));
    const pid = await new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
      child.once('error', reject);
    });
    // Neither the guard nor its pipes may keep this process alive; closing the pipe ends the guard.
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    (child.stdout as unknown as { unref(): void }).unref();
    return { pid, exited: () => exited, release: () => child.stdin!.end() };
  } finally {
    closeSync(logFile);
  }
}
