// CPU time per process, read from /proc, for the benchmark's CPU per request: which processes count as
// which part of the stack (a service, the broker, PostgreSQL), and their CPU between two snapshots.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The parts of a scenario's CPU, each in µs per request answered; null where the process was not found. */
export interface CpuPerRequest {
  /** The gateway; in the hello-world and naive scenarios, the baseline server they measure instead. */
  gateway: number | null;
  'trip-writer': number | null;
  'group-writer': number | null;
  /** Reads every stored position: its CPU and its PostgreSQL statements follow the writes. */
  'event-processor': number | null;
  broker: number | null;
  postgres: number | null;
  /** autocannon in the bench's own process, the bench's own work included. */
  loadGenerator: number | null;
  /** The sum of the parts found. */
  total: number;
}

export type CpuPart = Exclude<keyof CpuPerRequest, 'total'>;
export const CPU_PARTS: CpuPart[] = ['gateway', 'trip-writer', 'group-writer', 'event-processor', 'broker', 'postgres', 'loadGenerator'];

export interface ProcStat {
  comm: string;
  /** Clock ticks since the boot at which the process started: with the pid, it names one process. */
  startTicks: number;
  /** User plus system CPU, in clock ticks. */
  cpuTicks: number;
}

/**
 * One /proc/<pid>/stat line. The command name is in parentheses and may itself hold spaces and
 * parentheses, so the fields after it are found from the last ')'.
 */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
  // Fields from the third (state) on; utime and stime are fields 14 and 15, starttime field 22.
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const field = (n: number) => Number(fields[n - 3]);
  return { comm: text.slice(open + 1, close), startTicks: field(22), cpuTicks: field(14) + field(15) };
}

let ticksPerSecond: number | undefined;
/** The kernel's clock ticks per second (100 on Linux), asked once. */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const answer = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
    ticksPerSecond = Number.isInteger(answer) && answer > 0 ? answer : 100;
  }
  return ticksPerSecond;
}

function readStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

function allPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** The postmaster and every backend and background worker: whatever runs as `postgres…`. */
export function postgresPids(): number[] {
  return allPids().filter((pid) => {
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8');
      return comm.startsWith('postgres') || readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres');
    } catch {
      return false;
    }
  });
}

/** The local process listening on a TCP port, if this user may see its sockets. */
export function listenerPid(port: number): number | null {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').trim().split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      // State 0A is LISTEN.
      if (state === '0A' && local && parseInt(local.split(':')[1]!, 16) === port && inode) inodes.add(`socket:[${inode}]`);
    }
  }
  if (inodes.size === 0) return null;
  for (const pid of allPids()) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
      }
    } catch {
      // A process gone or not ours to look into.
    }
  }
  return null;
}

/** A local broker of the given host:port list: its JVM (or the mock's kcat), not a proxy in front of one. */
export function localBrokerPid(brokers: string): number | null {
  const match = /^(localhost|127\.0\.0\.1|\[::1\]):(\d+)$/.exec(brokers.split(',')[0]!.trim());
  const pid = match ? listenerPid(Number(match[2])) : null;
  if (pid === null) return null;
  try {
    return /kafka|kcat/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')) ? pid : null;
  } catch {
    return null;
  }
}

/** A process's CPU seconds so far (user plus system), or null when it is gone. */
export function processCpuSeconds(pid: number): number | null {
  const stat = readStat(pid);
  return stat ? stat.cpuTicks / clockTicksPerSecond() : null;
}

/** How to find the processes of each part at the moment of a snapshot; an empty list is "not found". */
export type CpuSources = Record<Exclude<CpuPart, 'loadGenerator'>, () => number[]>;

export interface CpuSnapshot {
  /** Per part, CPU ticks by `pid:start`, so that a reused pid is not taken for the process before it. */
  parts: Map<CpuPart, Map<string, number> | null>;
  loadGenerator: NodeJS.CpuUsage;
}

export function cpuSnapshot(sources: CpuSources): CpuSnapshot {
  const parts = new Map<CpuPart, Map<string, number> | null>();
  for (const [part, pids] of Object.entries(sources) as Array<[CpuPart, () => number[]]>) {
    const found = new Map<string, number>();
    for (const pid of pids()) {
      const stat = readStat(pid);
      if (stat) found.set(`${pid}:${stat.startTicks}`, stat.cpuTicks);
    }
    parts.set(part, found.size ? found : null);
  }
  return { parts, loadGenerator: process.cpuUsage() };
}

/** CPU seconds of each part between two snapshots; null for a part not found at the end. */
export type CpuSeconds = Record<CpuPart, number | null>;

/**
 * A process that started inside the window counts from zero; one that ended inside it is lost, as
 * /proc no longer holds it.
 */
export function cpuBetween(start: CpuSnapshot, end: CpuSnapshot): CpuSeconds {
  const seconds = {} as CpuSeconds;
  for (const [part, atEnd] of end.parts) {
    const atStart = start.parts.get(part);
    seconds[part] = atEnd
      ? [...atEnd].reduce((sum, [key, ticks]) => sum + ticks - (atStart?.get(key) ?? 0), 0) / clockTicksPerSecond()
      : null;
  }
  const used = process.cpuUsage(start.loadGenerator);
  seconds.loadGenerator = (used.user + used.system) / 1e6;
  return seconds;
}

/**
 * CPU seconds of one process of the end snapshot between the two, whichever part it counts in: for a
 * part run by several processes (the scale-out's two gateways), each one's share. Null when the end
 * snapshot does not hold it.
 */
export function processCpuBetween(start: CpuSnapshot, end: CpuSnapshot, pid: number): number | null {
  for (const [part, atEnd] of end.parts) {
    for (const [key, ticks] of atEnd ?? []) {
      if (key.startsWith(`${pid}:`)) return (ticks - (start.parts.get(part)?.get(key) ?? 0)) / clockTicksPerSecond();
    }
  }
  return null;
}

/** Adds the CPU of several windows (the hello-world runs), part by part. */
export function addCpu(a: CpuSeconds, b: CpuSeconds): CpuSeconds {
  const sum = {} as CpuSeconds;
  for (const part of CPU_PARTS) sum[part] = a[part] === null || b[part] === null ? (a[part] ?? b[part]) : a[part] + b[part];
  return sum;
}

/** CPU seconds over a window as µs per unit of work done in it (requests answered, or positions). */
export function perUnit(cpu: CpuSeconds, units: number): CpuPerRequest {
  const result = { total: 0 } as CpuPerRequest;
  for (const part of CPU_PARTS) {
    const value = cpu[part];
    result[part] = value === null || units <= 0 ? null : (value * 1e6) / units;
    result.total += result[part] ?? 0;
  }
  return result;
}
