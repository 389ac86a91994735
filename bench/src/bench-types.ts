// What a bench run is given and what it reports.
import { type StreamDelay } from './live-streams';
import { type CapacityModel } from './capacity';
import { type CpuPerRequest } from './process-cpu';
import { type Volume, type VolumeSize } from './volume';

export interface BenchOptions {
  connections: number;
  /**
   * The scale-out scenario's trip creates a second for each gateway, paced: 1 + 1 gets this many, 2 + 2
   * twice, 4 + 4 four times, so that every instance carries the same load in each step.
   */
  scaleOutRate: number;
  durationSeconds: number;
  warmupSeconds: number;
  databaseUrl: string;
  /** A stack already running elsewhere (its gateway URL), instead of starting one. */
  targetUrl?: string;
  apiKey?: string;
  jwtSecret?: string;
  /** Brokers for the started stack; unset, it runs on the local Apache Kafka that `npm start` starts. */
  kafkaBrokers?: string;
  /** The positions generated in the database before the scenarios run. */
  volume: VolumeSize;
  /** Earlier runs, oldest first (bench/results/history.jsonl), to hold this run's trip creates against. */
  history?: BenchReport[];
}

export interface ScenarioResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** For a scenario counted in positions (a batch, the scale-out's creates): positions stored per second. */
  positionsPerSecond?: number;
  /** The mean of the hello-world runs just before and just after this scenario (for hello-world: of all its runs). */
  baseline: { requestsPerSecond: number; p99Ms: number };
  ratio: number;
  /** CPU of each process over the measured window, per request answered in it (hello-world: over all its runs). */
  cpuMicrosPerRequest: CpuPerRequest;
  /** For a scenario posting many positions per request: the same per position. */
  cpuMicrosPerPosition?: CpuPerRequest;
  /** For a part run by several processes (the scale-out's): each process's CPU per request, by its label. */
  cpuMicrosPerRequestByProcess?: Record<string, number | null>;
  /** For a load split over several gateways (the scale-out's): the requests each answered in the measured window. */
  requestsByGateway?: Record<string, number>;
  /** For creates followed on live streams: the delay from each post's 200 to its event. */
  streamDelay?: StreamDelay;
}

export interface Target {
  what: string;
  value: number;
  target: string;
  /** Null for a figure reported for information, against no goal. */
  met: boolean | null;
}

export interface BenchReport {
  startedAt: string;
  /** The Kafka the stack ran on, as its launcher named it. */
  broker: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  /**
   * How the scale-out held each instance's load: runs before 2026-11-27 gave each gateway
   * `scaleOutConnections`, later ones `scaleOutRate` creates a second; the earliest, neither.
   */
  settings: { connections: number; scaleOutConnections?: number; scaleOutRate?: number; durationSeconds: number; warmupSeconds: number };
  /** What the scenarios ran on; absent from runs recorded before the volume was generated. */
  volume?: Volume;
  /** The earlier run this run's trip creates were compared with, and its trip create ratio to hello-world. */
  tripCreateBefore?: { startedAt: string; ratio: number };
  scenarios: ScenarioResult[];
  /** Requests per second of each hello-world run, in order: one before the first scenario and one after each. */
  helloWorldRuns: number[];
  peakRssMiB: Record<string, number | null>;
  targets: Target[];
  /** Positions a second per core of each part, and what fleets of 1k-100k positions a second would need; absent from older runs. */
  capacity?: CapacityModel;
}
