// What replication costs, measured against Kafka's own producer: on one node and on three, the system's
// trip creates and ProducerPerformance's records at the same paced rates on the same nodes in one run,
// the broker's CPU per create and per record at each rate, their ratio, the requests a create costs the
// broker by API, and fits of a fixed cost plus a cost per create for a capacity plan drawn from the rates
// measured rather than from one saturated point.
import { fitQuietFleet, type QuietFleetFit, type QuietPart } from './quiet-fleet';
import type { RequestCounts } from './kafka-tools';
import { PLANNED_RATES, PLANNED_UTILISATION } from './capacity';

/** Creates (and Kafka's records) a second of each step. */
export const REPLICATION_RATES = [250, 500, 1000] as const;
/** The system's broker CPU per create, as a multiple of Kafka's own producer's per record at that rate: at most. */
export const BROKER_RATIO_GOAL = 3;

export interface KafkaProducerStep {
  /** Records a second asked, and sent. */
  rate: number;
  recordsPerSecond: number;
  records: number;
  p99Ms: number;
  /** The nodes' CPU per record, in µs. */
  brokerMicrosPerRecord: number;
  /** The nodes' CPU over the step as a share of one core. */
  brokerCores: number;
}

export interface SystemStep {
  /** Creates a second asked, and answered 200. */
  rate: number;
  createsPerSecond: number;
  errors: number;
  p99Ms: number;
  /** Each process's CPU as a share of one core; the broker is the nodes together. */
  cores: Record<QuietPart, number | null>;
  totalCores: number;
  brokerMicrosPerCreate: number;
  totalMicrosPerCreate: number;
  /** Requests the nodes handled per create answered, by API; null when their MBeans did not answer. */
  requestsPerCreate: RequestCounts | null;
}

export interface ReplicationShape {
  nodes: 1 | 3;
  /** The nodes' CPU with no client connected, as a share of one core. */
  idleBrokerCores: number;
  /** The stack at rest: each process, the nodes among them. */
  restCores: Record<QuietPart, number | null>;
  /** Requests a second the nodes handled for the stack at rest, by API. */
  restRequestsPerSecond: RequestCounts | null;
  kafka: KafkaProducerStep[];
  system: SystemStep[];
  /** The nodes' CPU: fixed plus per record / per create, over the rates measured. */
  kafkaBrokerFit: QuietFleetFit;
  systemBrokerFit: QuietFleetFit;
  /** The whole stack's CPU over the rates measured (the nodes included). */
  systemFit: QuietFleetFit;
  /** Each part's fit, for the capacity plan. */
  partFits: Partial<Record<QuietPart, QuietFleetFit>>;
}

export interface ReplicationReport {
  startedAt: string;
  secondsPerStep: number;
  shapes: ReplicationShape[];
}

/** Fits a part's cores over the steps, on the rate each step achieved. */
export function fitPart(steps: readonly { rate: number; cores: number | null }[]): QuietFleetFit | undefined {
  const measured = steps.filter((step): step is { rate: number; cores: number } => step.cores !== null);
  if (measured.length < 2) return undefined;
  return fitQuietFleet(measured.map((step) => ({ rate: step.rate, totalCores: step.cores })));
}

/** Every part's fit over the system's steps (on the creates a second answered). */
export function partFits(system: readonly SystemStep[]): Partial<Record<QuietPart, QuietFleetFit>> {
  const parts = Object.keys(system[0]?.cores ?? {}) as QuietPart[];
  const fits: Partial<Record<QuietPart, QuietFleetFit>> = {};
  for (const part of parts) {
    const fit = fitPart(system.map((step) => ({ rate: step.createsPerSecond, cores: step.cores[part] })));
    if (fit) fits[part] = fit;
  }
  return fits;
}

/** What a part is planned to cost: a fixed share of a core plus µs per create, and where those come from. */
export interface PlanningCost {
  fixedCores: number;
  perCreateMicros: number;
  /**
   * 'fitted': the fit over the rates measured; 'highest rate': the fit found no cost rising with the
   * rate (a broker on this host costs less per record the busier it is, and can cost less in all), so
   * the cost per create at the highest rate measured is taken for every rate above it, with no fixed
   * part: an upper bound while the cost per create keeps falling as the rate rises.
   */
  basis: 'fitted' | 'highest rate';
}

/** Each part's planning cost from the system's steps on one shape. */
export function planningCosts(system: readonly SystemStep[]): Partial<Record<QuietPart, PlanningCost>> {
  const fits = partFits(system);
  const busiest = system.reduce<SystemStep | undefined>(
    (top, step) => (!top || step.createsPerSecond > top.createsPerSecond ? step : top),
    undefined,
  );
  const costs: Partial<Record<QuietPart, PlanningCost>> = {};
  for (const [part, fit] of Object.entries(fits) as [QuietPart, QuietFleetFit][]) {
    if (fit.perCreateMicros > 0 && fit.fixedCores >= 0) {
      costs[part] = { ...fit, basis: 'fitted' };
    } else if (busiest && busiest.createsPerSecond > 0) {
      costs[part] = {
        fixedCores: 0,
        perCreateMicros: ((busiest.cores[part] ?? 0) * 1e6) / busiest.createsPerSecond,
        basis: 'highest rate',
      };
    }
  }
  return costs;
}

export interface FittedPlan {
  positionsPerSecond: number;
  /** True when the rate lies within the rates measured; otherwise the costs are extrapolated to it. */
  measured: boolean;
  gateways: number;
  tripWriters: number;
  eventProcessors: number;
  brokerCores: number;
  postgresCores: number;
}

/**
 * Processes or cores a part needs for `rate` creates a second from its cost, each planned busy at
 * PLANNED_UTILISATION: a Node.js service runs on one core, so it takes the processes whose fixed costs
 * plus the rate's share fill that; the broker and PostgreSQL take the cores.
 */
export function fittedPlan(rate: number, costs: Partial<Record<QuietPart, Omit<PlanningCost, 'basis'>>>, measuredUpTo: number): FittedPlan {
  const perCreate = (part: QuietPart) => (costs[part]?.perCreateMicros ?? 0) / 1e6;
  const fixed = (part: QuietPart) => Math.max(0, costs[part]?.fixedCores ?? 0);
  // Rounded up, but not for the last bits of a float: 0.65 cores of work at 0.65 a process is one process.
  const whole = (count: number) => Math.max(1, Math.ceil(count - 1e-9));
  const processes = (part: QuietPart) => whole((perCreate(part) * rate) / Math.max(0.05, PLANNED_UTILISATION - fixed(part)));
  const cores = (part: QuietPart) => whole((fixed(part) + perCreate(part) * rate) / PLANNED_UTILISATION);
  return {
    positionsPerSecond: rate,
    measured: rate <= measuredUpTo,
    gateways: processes('gateway'),
    tripWriters: processes('trip-writer'),
    eventProcessors: processes('event-processor'),
    brokerCores: cores('broker'),
    postgresCores: cores('postgres'),
  };
}

/** docs/performance.md's replication figures, from bench/results/replication.json. */
export const REPLICATION_SECTION = {
  start: '<!-- replication: written by `npm run bench:replication` from bench/results/replication.json; do not edit by hand -->',
  end: '<!-- end of replication -->',
};

const percent = (cores: number | null | undefined) => (cores === null || cores === undefined ? 'n/a' : `${(cores * 100).toFixed(1)}%`);
const round = (value: number) => Math.round(value).toLocaleString('en-US');
const requestsLine = (counts: RequestCounts | null, digits: number) =>
  counts === null
    ? 'not read'
    : Object.entries(counts)
        .slice(0, 6)
        .map(([api, count]) => `${api} ${count.toFixed(digits)}`)
        .join(', ');

/** The run as tables: the yardstick beside the system per shape and rate, the fits, the requests, the plan. */
export function replicationTable(report: ReplicationReport): string {
  const lines = [
    `Run of ${report.startedAt}, ${report.secondsPerStep} s a step. Broker CPU is the nodes' together; ` +
      "Kafka's own producer is ProducerPerformance, acks=all, 300-byte records, linger 5 ms.",
    '',
    "| nodes | rate asked | Kafka's producer: records/s | broker µs per record | system: creates/s answered | broker µs per create | × Kafka's | whole stack µs per create | p99 (ms) | errors |",
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const verdicts: string[] = [];
  for (const shape of report.shapes) {
    for (const system of shape.system) {
      const kafka = shape.kafka.find((step) => step.rate === system.rate);
      const ratio = kafka && system.createsPerSecond > 0 ? system.brokerMicrosPerCreate / kafka.brokerMicrosPerRecord : null;
      lines.push(
        `| ${shape.nodes} | ${round(system.rate)} | ${kafka ? round(kafka.recordsPerSecond) : 'n/a'} | ` +
          `${kafka ? round(kafka.brokerMicrosPerRecord) : 'n/a'} | ${round(system.createsPerSecond)} | ${round(system.brokerMicrosPerCreate)} | ` +
          `${ratio === null ? 'n/a' : `${ratio.toFixed(1)}×`} | ${round(system.totalMicrosPerCreate)} | ${round(system.p99Ms)} | ${system.errors} |`,
      );
      if (ratio !== null) {
        verdicts.push(
          `- ${shape.nodes} node${shape.nodes === 1 ? '' : 's'} at ${round(system.rate)} a second: broker CPU per create ${ratio.toFixed(1)}× ` +
            `Kafka's per record (goal <= ${BROKER_RATIO_GOAL}×): ${ratio <= BROKER_RATIO_GOAL ? 'met' : 'MISSED'}`,
        );
      }
    }
  }
  lines.push(
    '',
    ...verdicts,
    '',
    '| nodes | broker, no client | stack at rest: broker | gateway | trip-writer | group-writer | teltonika | event-processor | postgres |',
  );
  lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const shape of report.shapes) {
    const rest = shape.restCores;
    lines.push(
      `| ${shape.nodes} | ${percent(shape.idleBrokerCores)} | ${percent(rest.broker)} | ${percent(rest.gateway)} | ${percent(rest['trip-writer'])} | ` +
        `${percent(rest['group-writer'])} | ${percent(rest.teltonika)} | ${percent(rest['event-processor'])} | ${percent(rest.postgres)} |`,
    );
  }
  lines.push('');
  const fitted = (fit: QuietFleetFit, unit: string) =>
    `${percent(fit.fixedCores)} of a core fixed ${fit.perCreateMicros >= 0 ? 'plus' : 'minus'} ${round(Math.abs(fit.perCreateMicros))} µs ${unit}`;
  for (const shape of report.shapes) {
    const label = `${shape.nodes} node${shape.nodes === 1 ? '' : 's'}`;
    lines.push(
      `- ${label}, fitted over the rates measured (a slope below zero: the busier, the less CPU in all): broker CPU for Kafka's ` +
        `producer ${fitted(shape.kafkaBrokerFit, 'per record')}, for the system ${fitted(shape.systemBrokerFit, 'per create')}; ` +
        `the whole stack ${fitted(shape.systemFit, 'per create')}.`,
      `- ${label}, requests per create by API at ${round(shape.system.at(-1)?.rate ?? 0)} a second: ${requestsLine(shape.system.at(-1)?.requestsPerCreate ?? null, 2)}; ` +
        `at ${round(shape.system[0]?.rate ?? 0)}: ${requestsLine(shape.system[0]?.requestsPerCreate ?? null, 2)}; the stack at rest, a second: ` +
        `${requestsLine(shape.restRequestsPerSecond, 1)}.`,
    );
  }
  const production = report.shapes.find((shape) => shape.nodes === 3);
  if (production) {
    const measuredUpTo = Math.max(...production.system.map((step) => step.createsPerSecond));
    const costs = planningCosts(production.system);
    const costLine = (['gateway', 'trip-writer', 'event-processor', 'broker', 'postgres'] as const)
      .filter((part) => costs[part])
      .map((part) => {
        const cost = costs[part]!;
        return cost.basis === 'fitted'
          ? `${part} ${percent(cost.fixedCores)} + ${round(cost.perCreateMicros)} µs a create (fitted)`
          : `${part} ${round(cost.perCreateMicros)} µs a create (its cost at ${round(measuredUpTo)} a second: it did not rise with the rate)`;
      })
      .join('; ');
    lines.push(
      '',
      `Capacity for the production shape, three nodes, each part planned ${PLANNED_UTILISATION * 100}% busy, from: ${costLine}. ` +
        `Measured up to ${round(measuredUpTo)} creates a second; above that, extrapolated:`,
      '',
      '| positions/s | figures | gateways | trip-writers | event processors | broker cores | PostgreSQL cores |',
      '|---:|---|---:|---:|---:|---:|---:|',
      ...PLANNED_RATES.map((rate) => {
        const plan = fittedPlan(rate, costs, measuredUpTo);
        return (
          `| ${round(rate)} | ${plan.measured ? 'measured' : 'extrapolated'} | ${plan.gateways} | ${plan.tripWriters} | ${plan.eventProcessors} | ` +
          `${plan.brokerCores} | ${plan.postgresCores} |`
        );
      }),
    );
  }
  return lines.join('\n');
}
