// A Prometheus server of the test's own (Debian's `prometheus` package), on a free port, with its
// configuration and storage in a temporary folder; and what the tests read from its HTTP API and from
// the repository's rules and dashboard. The same guard as processes.ts ends the server when the test
// process goes away, however it ends.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { parser as promqlParser } from '@prometheus-io/lezer-promql' with { 'resolution-mode': 'import' };
import { parse, stringify } from 'yaml';
import { boundedWait } from './deadline';

// Prometheus's own PromQL grammar. The package ships CommonJS (its "require" export) but declares its
// types as an ES module, which a CommonJS file may only import as types.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above: a value import would not type-check
const { parser } = require('@prometheus-io/lezer-promql') as { parser: typeof promqlParser };

export const observabilityDir = path.resolve(__dirname, '..', '..', 'deploy', 'observability');
export const rulesFile = path.join(observabilityDir, 'alerts.yml');
export const dashboardFile = path.join(observabilityDir, 'grafana', 'dashboards', 'fleet-telemetry.json');

/** Fails with a clear message where Debian's prometheus package is missing (.ci/run installs it). */
export function requireTool(tool: 'promtool' | 'prometheus'): void {
  try {
    execFileSync(tool, ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`${tool} is needed for the alert tests (apt-get install prometheus)`);
  }
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function readRules(file = rulesFile): AlertRule[] {
  const rules = parse(readFileSync(file, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return rules.groups.flatMap((group) => group.rules);
}

/** Every PromQL expression of the dashboard's panels, with the panel it comes from. */
export function dashboardExpressions(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
}

/** The metric names an expression selects, read from its syntax tree; throws when it does not parse. */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  let error: number | undefined;
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) error ??= node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.add(expr.slice(node.from, node.to));
    },
  });
  if (error !== undefined) throw new Error(`PromQL syntax error at ${error}: ${expr}`);
  return [...names];
}

export interface ScrapeTarget {
  service: string;
  /** host:port of its /metrics */
  address: string;
}

export interface PrometheusServer {
  url: string;
  logs: string[];
  /** GET /api/v1/<path>; throws unless Prometheus answers status "success". */
  api<T>(apiPath: string, params?: Record<string, string>): Promise<T>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  targets: ScrapeTarget[];
  /** Rules written into the server's folder and loaded. */
  rules?: AlertRule[];
  /** Scrape and rule evaluation interval. */
  interval?: string;
}

const GUARD = [
  'exec 3<&0',
  '"$@" </dev/null & server=$!',
  '(cat <&3 >/dev/null; kill -KILL "$server" 2>/dev/null) >/dev/null 2>&1 &',
  'wait "$server"',
].join('\n');

/**
 * Starts Prometheus scraping the targets as the compose and Kubernetes configurations do: one job per
 * service, the target labelled `service`, the services' own labels honoured.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  requireTool('prometheus');
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-prometheus-'));
  const interval = options.interval ?? '1s';
  const services = [...new Set(options.targets.map((target) => target.service))];
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
    rule_files: options.rules ? ['rules.yml'] : [],
    scrape_configs: services.map((service) => ({
      job_name: service,
      honor_labels: true,
      static_configs: [{ targets: options.targets.filter((t) => t.service === service).map((t) => t.address), labels: { service } }],
    })),
  };
  writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
  if (options.rules) writeFileSync(path.join(dir, 'rules.yml'), stringify({ groups: [{ name: 'fleet-telemetry', rules: options.rules }] }));

  const child = spawn(
    'bash',
    [
      '-c',
      GUARD,
      'guard',
      'prometheus',
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  const logs: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prometheus did not start listening: ${logs.slice(-5).join(' | ')}`)), 30_000);
    createInterface({ input: child.stderr! }).on('line', (line) => {
      logs.push(line);
      const listening = /msg="Listening on" address=\S*:(\d+)/.exec(line);
      if (listening) {
        clearTimeout(timer);
        resolve(Number(listening[1]));
      }
    });
    void exited.then(() => reject(new Error(`prometheus exited: ${logs.slice(-5).join(' | ')}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  // It listens before its storage is open, answering 503 until then.
  const deadline = Date.now() + boundedWait(30_000).ms;
  while (
    (await fetch(`${url}/-/ready`).then(
      (response) => response.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline) throw new Error(`prometheus did not become ready: ${logs.slice(-5).join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    url,
    logs,
    async api<T>(apiPath: string, params: Record<string, string> = {}): Promise<T> {
      const response = await fetch(`${url}/api/v1/${apiPath}?${new URLSearchParams(params)}`);
      const body = (await response.json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`${apiPath}: ${body.error ?? response.status}`);
      return body.data;
    },
    async stop() {
      // Closing the guard's pipe ends the server.
      child.stdin?.end();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
