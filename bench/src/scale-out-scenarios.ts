// The bench's scale-out scenarios: the same trip creates through one gateway and one trip-writer, then
// two of each, then four. What three Kafka nodes cost is measured apart, at paced rates beside Kafka's
// own producer (`npm run bench:replication`).
import { freePort } from '@fleet/local-stack/local-ports';
import type { BenchOptions } from './bench-types';
import type { Drive, LoadRequest } from './load-driver';
import type { CpuOf } from './measure';
import { postsAnswered, SCALE_OUT_FOUR, SCALE_OUT_ONE, SCALE_OUT_TWO, startScaleOut, type ScaleOut } from './scale-out';

/** The processes a scenario added and that run now, for the run to stop whatever happens. */
export interface RunningTwins {
  scaleOut: ScaleOut[];
}

export interface ScaleOutContext {
  options: BenchOptions;
  gatewayUrl: string;
  /** The started stack's gateway and trip-writer, which the twins copy. */
  pids: { gateway: number; tripWriter: number };
  tripCreateJson: LoadRequest;
  /** Posts one create through a gateway, for the twins' readiness checks. */
  createThrough: (url: string) => Promise<number>;
  runScenario: (
    name: string,
    url: string | string[],
    request: LoadRequest,
    sources: CpuOf,
    gateways?: Record<string, () => Promise<number>>,
    how?: Drive,
  ) => Promise<void>;
  cpuOf: (server?: undefined, twins?: ScaleOut[]) => CpuOf;
  running: RunningTwins;
}

// Scale-out: the same trip creates through one gateway and one trip-writer, then through two of each
// in one consumer group, then four, the connections split evenly over the gateways. 1 + 1 is
// measured afresh just before 2 + 2 rather than taken from the trip create scenario above, so that
// the host has least time to drift between them. Only a stack started here has processes to copy.
export async function runScaleOutScenarios(context: ScaleOutContext): Promise<void> {
  const { options, gatewayUrl, pids, tripCreateJson, createThrough, runScenario, cpuOf, running } = context;
  const creates: LoadRequest = { ...tripCreateJson, positions: 1 };
  const paced: Drive = { ratePerUrl: options.scaleOutRate };
  await runScenario(SCALE_OUT_ONE, [gatewayUrl], creates, cpuOf(), undefined, paced);
  const gatewayUrls = [gatewayUrl];
  for (const [name, added] of [
    [SCALE_OUT_TWO, 1],
    [SCALE_OUT_FOUR, 2],
  ] as const) {
    process.stderr.write(`bench: starting ${added} more gateway(s) and trip-writer(s)\n`);
    const ports: number[] = [];
    while (ports.length < 2 * added) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const twins = await startScaleOut({
      gatewayPid: pids.gateway,
      tripWriterPid: pids.tripWriter,
      gatewayUrls,
      ports,
      create: createThrough,
    });
    running.scaleOut.push(twins);
    gatewayUrls.push(...twins.gatewayUrls);
    const answeredBy = Object.fromEntries(gatewayUrls.map((url, i) => [`gateway ${i + 1}`, () => postsAnswered(url)]));
    await runScenario(name, [...gatewayUrls], creates, cpuOf(undefined, running.scaleOut), answeredBy, paced);
  }
  for (const twins of running.scaleOut.splice(0)) await twins.stop();
}
