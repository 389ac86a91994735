// The bench's load: the baselines and the stack's processes it starts and finds, and autocannon driving
// a request at a fixed concurrency or a paced rate.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { pacedLoad } from './paced-load';

/** Trip creates sent before the first scenario on a broker, so that no scenario measures its JIT warm-up. */
export const WRITE_PATH_WARMUP_SECONDS = 20;
export const repoRoot = path.resolve(__dirname, '..', '..');
/** The baselines run compiled, as the services do, whether this module runs compiled or under jest. */
const baselinesDir = path.join(repoRoot, 'bench', 'dist');

export interface Running {
  url: string;
  process: ChildProcess;
}

export interface LoadRequest {
  method: 'GET' | 'POST';
  /** A function when each request asks for something else (another device, another day). */
  path: string | (() => string);
  /** A function when each request comes from another client (another device's token). */
  headers?: Record<string, string> | (() => Record<string, string>);
  body?: () => string;
  /** Positions each request carries, where positions per second are reported (a batch, the scale-out's creates). */
  positions?: number;
  /** For a batch: how many of its positions the answer refused, each counted as an error. */
  refused?: (body: string) => number;
  /** Sees each 200's body as it arrives. */
  answered?: (body: string) => void;
  /** Runs between the warm-up and the measured run. */
  warmedUp?: () => Promise<void>;
}

export function spawnNode(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

/** Starts one of the baseline servers and waits for the port it reports. */
export async function startBaseline(script: string, env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const child = spawnNode(path.join(baselinesDir, script), { PORT: '0', ...env });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /"port":(\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}

/** A TCP port free on this machine now. */
export async function waitReady(url: string, child: ChildProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the stack exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`the stack did not become ready within ${timeoutMs / 1000} s`);
}

/** The services the launcher started, by name, for reading their CPU and peak memory. */
export function serviceProcesses(launcherPid: number): Record<string, number> {
  const found: Record<string, number> = {};
  const children = readFileSync(`/proc/${launcherPid}/task/${launcherPid}/children`, 'utf8').trim().split(/\s+/);
  for (const pid of children.filter(Boolean)) {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const match = /services\/([a-z-]+)\/dist\/main\.js/.exec(cmdline);
    if (match) found[match[1]!] = Number(pid);
    else if (cmdline.includes('services/teltonika/dist/main.js')) found.teltonika = Number(pid);
  }
  return found;
}

/** Peak resident memory of a process (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * Several URLs (the scale-out's gateways) share the connections in turn, connection i going to URL
 * i mod n, in one autocannon run: its figures and its latency histogram are then of all the requests,
 * with no summing of runs nor merging of percentiles. autocannon takes a list (its README: "More than one
 * URL is allowed"); its type declarations know only one.
 */
export async function load(url: string | string[], request: LoadRequest, connections: number, seconds: number, overallRate?: number) {
  let refused = 0;
  const { path: requestPath, body: makeBody, headers } = request;
  const perRequest = makeBody || typeof requestPath !== 'string' || typeof headers === 'function';
  const result = await autocannon({
    url: url as string,
    connections,
    duration: seconds,
    // Requests a second across the connections, when the load is paced rather than as fast as answered.
    ...(overallRate === undefined ? {} : { overallRate }),
    requests: [
      {
        method: request.method,
        path: typeof requestPath === 'string' ? requestPath : requestPath(),
        headers: typeof headers === 'function' ? headers() : headers,
        ...(perRequest
          ? {
              setupRequest: (req: object) => ({
                ...req,
                ...(typeof requestPath === 'string' ? {} : { path: requestPath() }),
                ...(typeof headers === 'function' ? { headers: headers() } : {}),
                ...(makeBody ? { body: makeBody() } : {}),
              }),
            }
          : {}),
        ...(request.refused || request.answered
          ? {
              onResponse: (status: number, body: string) => {
                if (status !== 200) return;
                if (request.refused) refused += request.refused(body);
                request.answered?.(body);
              },
            }
          : {}),
      },
    ],
  });
  return { result, refused };
}

/** How a scenario is driven: at a fixed concurrency (autocannon), or at a fixed rate for each URL (paced). */
export type Drive = { connections: number } | { ratePerUrl: number };

/** Runs the load `drive` describes for `seconds`. */
export async function drive(url: string | string[], request: LoadRequest, how: Drive, seconds: number) {
  if ('connections' in how) return load(url, request, how.connections, seconds);
  let refused = 0;
  const { path: requestPath, headers, body } = request;
  const result = await pacedLoad(
    [url].flat(),
    {
      method: request.method,
      path: typeof requestPath === 'string' ? () => requestPath : requestPath,
      headers: typeof headers === 'function' ? headers : () => headers ?? {},
      ...(body ? { body } : {}),
      answered: (answer) => {
        refused += request.refused?.(answer) ?? 0;
        request.answered?.(answer);
      },
    },
    { ratePerUrl: how.ratePerUrl, seconds },
  );
  return { result, refused };
}
