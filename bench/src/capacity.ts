// The capacity model: what one core of each part of the stack stores, from the CPU per position a run
// measured, and what a fleet of a given size would need if those costs held as it grows. The per-core
// figures are measured; the plans are a linear extrapolation of them. The costs measured through 4
// gateways and 4 trip-writers are shown beside them, but the plans are not drawn from them: on a host
// with fewer cores than processes those costs are of processes taking turns on a core, not of
// instances each on a core of its own, which is what a plan deploys. These plans are of the single
// broker at saturation; the production shape's plan (three nodes, each part fitted as a fixed cost plus
// a cost per create over paced rates) is `npm run bench:replication`'s (replication.ts).
import type { CpuPerRequest } from './process-cpu';
import type { ScenarioResult } from './bench-types';

export type CapacityPart = 'gateway' | 'trip-writer' | 'event-processor' | 'broker' | 'postgres';
export const CAPACITY_PARTS: CapacityPart[] = ['gateway', 'trip-writer', 'event-processor', 'broker', 'postgres'];

/** Positions a second one core of a part stores, when it is busy with nothing else; null where unmeasured. */
export type PerCore = Record<CapacityPart, number | null>;

export interface CapacityPlan {
  positionsPerSecond: number;
  /** Devices that many positions a second are, each reporting every REPORT_INTERVAL_S seconds. */
  devices: number;
  gateways: number;
  tripWriters: number;
  /** Event processors: each reads the positions the trip-writers announce, every one of them. */
  eventProcessors: number;
  /**
   * Partitions of the trip-locations topic, and of the positions topic, which has as many: a consumer
   * group has at most one member per partition.
   */
  partitions: number;
  brokerCores: number;
  postgresCores: number;
  /** trip_locations growth, GiB a day, at the volume's measured bytes per position. */
  storageGiBPerDay: number | null;
}

export interface CapacityModel {
  /** Per core, each position posted on its own (trip create, JSON). */
  singlePosts: PerCore;
  /** Per core, positions posted in batches (trip batch). */
  batches: PerCore;
  /** Positions in each batch the batch figures were measured with. */
  batchPositions: number;
  /** Per core, each position posted on its own on three Kafka nodes (the broker: all three), in runs that measured it. */
  replicated?: PerCore | null;
  /** The scenario whose costs the plans extrapolate. */
  plannedFrom?: string;
  /** The scenario the broker's cost was planned from instead, in runs that measured three nodes. */
  brokerPlannedFrom?: string;
  /** Plans for fleets whose devices each post their positions one at a time. */
  plans: CapacityPlan[];
}

/** A fleet's devices each report their position every ten seconds. */
export const REPORT_INTERVAL_S = 10;
export const PLANNED_RATES = [1_000, 10_000, 100_000];
/**
 * The share of a core planned busy: headroom for bursts (devices reconnecting with buffers), a replica
 * being replaced, and the latency a saturated event loop adds.
 */
export const PLANNED_UTILISATION = 0.7;
/** The topic's partitions as provisioned; more only where the writers need more. */
const DEFAULT_PARTITIONS = 12;

function perCore(cpu: CpuPerRequest | undefined): PerCore {
  const rate = (micros: number | null | undefined) => (micros ? 1_000_000 / micros : null);
  return {
    gateway: rate(cpu?.gateway),
    'trip-writer': rate(cpu?.['trip-writer']),
    'event-processor': rate(cpu?.['event-processor']),
    broker: rate(cpu?.broker),
    postgres: rate(cpu?.postgres),
  };
}

/** Cores a part needs for `rate` positions a second, planned at PLANNED_UTILISATION; 0 when unmeasured. */
const coresFor = (rate: number, perCoreRate: number | null) => (perCoreRate ? rate / perCoreRate / PLANNED_UTILISATION : 0);

/**
 * A Node.js service runs its JavaScript on one core, so it scales by processes; the broker and
 * PostgreSQL scale by cores. Partitions: twice the writers or event processors, whichever are more, so
 * either group can double without repartitioning the topics (which would move keys and so a device's
 * order across partitions).
 */
export function capacityPlan(rate: number, singlePosts: PerCore, bytesPerPosition: number | undefined): CapacityPlan {
  const processes = (perCoreRate: number | null) => Math.max(1, Math.ceil(coresFor(rate, perCoreRate)));
  const tripWriters = processes(singlePosts['trip-writer']);
  const eventProcessors = processes(singlePosts['event-processor']);
  return {
    positionsPerSecond: rate,
    devices: rate * REPORT_INTERVAL_S,
    gateways: processes(singlePosts.gateway),
    tripWriters,
    eventProcessors,
    partitions: Math.max(DEFAULT_PARTITIONS, 2 * tripWriters, 2 * eventProcessors),
    brokerCores: Math.max(1, Math.ceil(coresFor(rate, singlePosts.broker))),
    postgresCores: Math.max(1, Math.ceil(coresFor(rate, singlePosts.postgres))),
    storageGiBPerDay: bytesPerPosition ? (rate * 86_400 * bytesPerPosition) / 2 ** 30 : null,
  };
}

export function capacityModel(scenarios: ScenarioResult[], bytesPerPosition: number | undefined, batchPositions: number): CapacityModel {
  const single = scenarios.find((scenario) => scenario.name === 'trip create, JSON');
  const batch = scenarios.find((scenario) => scenario.cpuMicrosPerPosition !== undefined);
  const singlePosts = perCore(single?.cpuMicrosPerRequest);
  return {
    singlePosts,
    batches: perCore(batch?.cpuMicrosPerPosition),
    batchPositions,
    plannedFrom: single?.name ?? 'trip create, JSON',
    plans: PLANNED_RATES.map((rate) => capacityPlan(rate, singlePosts, bytesPerPosition)),
  };
}
