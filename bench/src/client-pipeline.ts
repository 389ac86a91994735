// What `npm run bench:clients` measures and reports (client-pipeline-main.ts), apart from the clients
// themselves (pipeline-clients.ts), one of which loads only as an ES module.

export const PIPELINE_CLIENTS = ['kafkajs', '@platformatic/kafka'] as const;
export type PipelineClientName = (typeof PIPELINE_CLIENTS)[number];

/** A step the parent asks of a client's process: a paced rate (0 for rest) for a number of seconds. */
export interface PipelineStep {
  ratePerSecond: number;
  seconds: number;
}

export interface PipelineStepResult {
  sent: number;
  replied: number;
  p50Ms: number;
  p99Ms: number;
}

export interface ClientStepFigures {
  client: PipelineClientName;
  ratePerSecond: number;
  /** Shares of one core over the step. */
  clientCpu: number;
  brokerCpu: number;
  /** The broker's requests a second, by API. */
  brokerRequests: Record<string, number> | null;
  result: PipelineStepResult;
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** The figures as a markdown table, one row a client and step. */
export function clientPipelineTable(figures: readonly ClientStepFigures[]): string {
  const rows = figures.map((row) => {
    const load = row.ratePerSecond === 0 ? 'at rest' : `${row.ratePerSecond} creates/s`;
    const perCreate = row.ratePerSecond === 0 ? '' : String(Math.round(((row.clientCpu + row.brokerCpu) * 1e6) / row.ratePerSecond));
    const requests = row.brokerRequests
      ? Object.entries(row.brokerRequests)
          .filter(([, perSecond]) => perSecond >= 0.5)
          .sort((a, b) => b[1] - a[1])
          .map(([api, perSecond]) => `${api} ${perSecond.toFixed(1)}`)
          .join(', ')
      : 'not read';
    const latency = row.ratePerSecond === 0 ? '' : `${row.result.p50Ms} / ${row.result.p99Ms}`;
    return `| ${row.client} | ${load} | ${percent(row.clientCpu)} | ${percent(row.brokerCpu)} | ${perCreate} | ${latency} | ${row.result.replied}/${row.result.sent} | ${requests} |`;
  });
  return [
    '| client | load | client process | broker | µs per create (both) | round trip p50 / p99 (ms) | replied | broker requests a second |',
    '|---|---|---:|---:|---:|---:|---:|---|',
    ...rows,
  ].join('\n');
}
