// The bench's report from a run's measurements: hello-world as the mean of its runs, every scenario as
// measured, the services' peak memory, the targets, and the capacity model.
import os from 'node:os';
import { BATCH_POSITIONS } from './bench-requests';
import type { BenchOptions, BenchReport, ScenarioResult } from './bench-types';
import { capacityModel } from './capacity';
import { lastRunBeforePartitioning } from './history';
import { peakRssMiB } from './load-driver';
import type { Measured } from './measure';
import { addCpu, perUnit } from './process-cpu';
import { benchTargets } from './targets';
import type { Volume } from './volume';

export interface RunMeasurements {
  options: BenchOptions;
  startedAt: string;
  broker: string;
  volume: Volume;
  /** Every hello-world run, before the first scenario and after each. */
  helloRuns: Measured[];
  /** The scenarios, each with its baseline and ratio. */
  measured: ScenarioResult[];
  /** The stack's processes by service, for their peak memory. */
  services: Record<string, number>;
}

export function assembleReport({ options, startedAt, broker, volume, helloRuns, measured, services }: RunMeasurements): BenchReport {
  const mean = (pick: (run: Measured) => number) => helloRuns.reduce((sum, run) => sum + pick(run), 0) / helloRuns.length;
  const helloMean = { requestsPerSecond: mean((run) => run.requestsPerSecond), p99Ms: Math.round(mean((run) => run.p99Ms)) };
  const scenarios: ScenarioResult[] = [
    {
      name: 'hello-world (baseline)',
      requestsPerSecond: helloMean.requestsPerSecond,
      p50Ms: Math.round(mean((run) => run.p50Ms)),
      p99Ms: helloMean.p99Ms,
      errors: helloRuns.reduce((sum, run) => sum + run.errors, 0),
      baseline: helloMean,
      ratio: 1,
      cpuMicrosPerRequest: perUnit(
        helloRuns.map((run) => run.cpu).reduce(addCpu),
        helloRuns.reduce((sum, run) => sum + run.answered, 0),
      ),
    },
    ...measured,
  ];
  const peakRss: Record<string, number | null> = { gateway: null, 'trip-writer': null, 'group-writer': null };
  for (const [name, pid] of Object.entries(services)) peakRss[name] = peakRssMiB(pid);

  const tripCreateBefore = (() => {
    const run = lastRunBeforePartitioning(options.history ?? [], options.connections);
    const ratio = run?.scenarios.find((scenario) => scenario.name === 'trip create, JSON')?.ratio;
    return run && ratio ? { startedAt: run.startedAt, ratio } : undefined;
  })();
  const targets = benchTargets({ scenarios, gatewayRssMiB: peakRss.gateway ?? null, tripCreateBefore });

  return {
    startedAt,
    broker,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
    },
    settings: {
      connections: options.connections,
      scaleOutRate: options.scaleOutRate,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
    },
    volume,
    ...(tripCreateBefore ? { tripCreateBefore } : {}),
    scenarios,
    helloWorldRuns: helloRuns.map((run) => run.requestsPerSecond),
    peakRssMiB: peakRss,
    targets,
    capacity: capacityModel(scenarios, volume.bytesPerPosition, BATCH_POSITIONS),
  };
}
