// What the bench sends: a position no other request of the run has, buffered tracks and aggregated
// batches, the reads of the generated volume, and the Teltonika scenario's devices and packets.
import { quantileMs, teltonikaLoad } from './teltonika-load';
import { cpuBetween, cpuSnapshot, perUnit } from './process-cpu';
import { DAY_MS, volumeImei, type Volume } from './volume';
import { SignJWT } from 'jose';
import type { BenchOptions } from './bench-types';
import type { LoadRequest } from './load-driver';
import { cpuSummary, type CpuOf, type Measured } from './measure';

export const TELTONIKA_SCENARIO = `Teltonika Codec 8, packets of 10 records`;
export const TELTONIKA_RECORDS_PER_PACKET = 10;
export let benchDevices = 0;

/** Registers one device per connection through the gateway, as an operator would, and answers their IMEIs. */
export async function registerBenchDevices(gatewayUrl: string, bearer: () => Record<string, string>, count: number): Promise<string[]> {
  benchDevices += 1;
  const prefix = `${String(Date.now()).slice(-7)}${benchDevices % 100}`.padStart(9, '0');
  const imeis = Array.from({ length: count }, (_, index) => `86${prefix}${String(index).padStart(4, '0')}`);
  for (const imei of imeis) {
    const response = await fetch(`${gatewayUrl}/fleet/api/v1/devices`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ imei, name: 'bench' }),
    });
    if (response.status !== 200) throw new Error(`registering bench device ${imei} answered ${response.status}`);
  }
  return imeis;
}

/**
 * The Teltonika scenario: a request is a packet, answered by its acknowledgement. The warm-up and the
 * measured run each have devices of their own, so that neither's records count against the other's
 * device rate limit.
 */
export async function measureTeltonika(
  port: number,
  register: () => Promise<string[]>,
  options: BenchOptions,
  cpuOf: CpuOf,
): Promise<Measured> {
  if (options.warmupSeconds > 0) await teltonikaLoad(port, await register(), options.warmupSeconds, TELTONIKA_RECORDS_PER_PACKET);
  const imeis = await register();
  const before = cpuSnapshot(cpuOf.sources);
  const result = await teltonikaLoad(port, imeis, options.durationSeconds, TELTONIKA_RECORDS_PER_PACKET);
  const after = cpuSnapshot(cpuOf.sources);
  const cpu = cpuBetween(before, after);
  const packetsPerSecond = result.packets / options.durationSeconds;
  const p99Ms = quantileMs(result.latencies, 0.99);
  process.stderr.write(
    `  ${TELTONIKA_SCENARIO}: ${Math.round(packetsPerSecond)} packets/s, ${Math.round(packetsPerSecond * TELTONIKA_RECORDS_PER_PACKET)} ` +
      `positions/s, p99 ${p99Ms} ms, ${result.errors} errors, ${cpuSummary(perUnit(cpu, result.packets), 'teltonika')}\n`,
  );
  return {
    name: TELTONIKA_SCENARIO,
    requestsPerSecond: packetsPerSecond,
    p50Ms: quantileMs(result.latencies, 0.5),
    p99Ms,
    errors: result.errors,
    positionsPerSecond: packetsPerSecond * TELTONIKA_RECORDS_PER_PACKET,
    cpu,
    answered: result.packets,
  };
}

let sequence = 0;
/**
 * Positions are of the present, as live devices report them: their days' partitions exist (the writer
 * creates today's and the week ahead's), the naive baseline inserts into them too, and none is beyond
 * the gateway's MAX_FUTURE_SKEW. Each request has an IMEI of its own, so equal times never collide.
 */
export const benchStart = Date.now();
/** A vehicle group name no other request of the run has. */
export function uniqueGroupName(): string {
  sequence += 1;
  return `Bench ${sequence}`;
}

/** A unique position (as uniqueTrip) of one of `devices`, in turn. */
export function tripOfOneOf(devices: readonly string[]) {
  const trip = uniqueTrip();
  return { ...trip, imei: devices[sequence % devices.length]! };
}

/** A position no other request of the run has: a fresh IMEI per request. */
export function uniqueTrip() {
  sequence += 1;
  return {
    imei: `b${process.pid}${sequence}`,
    gpsTime: new Date(benchStart + sequence).toISOString(),
    latitude: -6.2 + (sequence % 100) / 1000,
    longitude: 106.8,
    speed: sequence % 120,
    ignition: sequence % 2 === 0,
    satellite: 9,
  };
}

/** A device back in coverage uploading what it buffered: one IMEI, positions a second apart. */
export function bufferedTrack(count: number) {
  sequence += 1;
  const imei = `bb${process.pid}${sequence}`;
  return Array.from({ length: count }, (_, i) => ({
    imei,
    gpsTime: new Date(benchStart + i * 1000).toISOString(),
    latitude: -6.2 + i / 1000,
    longitude: 106.8,
    speed: i % 120,
    ignition: true,
    satellite: 9,
  }));
}

/** One position of each of `count` devices, as a tracker aggregator or a protocol gateway forwards them. */
export function aggregatedBatch(count: number) {
  sequence += 1;
  return Array.from({ length: count }, (_, i) => ({
    imei: `ba${process.pid}${sequence}d${i}`,
    // Each device is new, so one instant serves them all; the counter would soon pass MAX_FUTURE_SKEW.
    gpsTime: new Date(benchStart).toISOString(),
    latitude: -6.2 + i / 1000,
    longitude: 106.8,
    speed: i % 120,
    ignition: true,
    satellite: 9,
  }));
}

export const BATCH_POSITIONS = 100;
/** Distinct token subjects the load is spread over, as devices and apps each hold their own. */
export const BENCH_DEVICE_TOKENS = 64;

export const DEVICES_PATH = '/fleet/api/v1/devices';
export const HISTORY_PAGE_LIMIT = 100;

export const anyDevice = (volume: Volume) => volumeImei(1 + Math.floor(Math.random() * volume.devices));

/** One device's positions over one day, that day anywhere inside the generated window. */
export function historyPagePath(volume: Volume): string {
  const from = Date.parse(volume.from) + Math.floor(Math.random() * (Date.parse(volume.to) - Date.parse(volume.from) - DAY_MS));
  const query = new URLSearchParams({
    from: new Date(from).toISOString(),
    to: new Date(from + DAY_MS).toISOString(),
    limit: String(HISTORY_PAGE_LIMIT),
  });
  return `${DEVICES_PATH}/${anyDevice(volume)}/trip-locations?${query.toString()}`;
}

export function formOf(trip: Record<string, unknown>): string {
  return new URLSearchParams(Object.entries(trip).map(([key, value]): [string, string] => [key, String(value)])).toString();
}

/** The clients the load comes from: a token per device, and the write requests they make. */
export interface BenchClients {
  bearer: () => Record<string, string>;
  json: Record<string, string>;
  /** A batch post of BATCH_POSITIONS positions made by `positions`; each it refuses counts as an error. */
  batchOf: (positions: () => unknown[]) => LoadRequest;
  tripCreateJson: LoadRequest;
}

/** A bearer token for `subject` that the stack run with `jwtSecret` accepts, for the length of a bench run. */
export function benchToken(subject: string, jwtSecret: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(jwtSecret));
}

export async function benchClients(jwtSecret: string): Promise<BenchClients> {
  // The load is many devices, each with a token of its own, as in a fleet: one shared subject would
  // meet the per-subject rate limit, which is there for a single client gone wrong.
  const tokens = await Promise.all(
    Array.from({ length: BENCH_DEVICE_TOKENS }, (_, device) => benchToken(`bench-device-${device}`, jwtSecret)),
  );
  const bearer = () => ({ authorization: `Bearer ${tokens[Math.floor(Math.random() * tokens.length)]!}` });
  const batchOf = (positions: () => unknown[]): LoadRequest => ({
    method: 'POST',
    path: '/fleet/api/v1/trip-location/batch',
    headers: () => ({ ...bearer(), ...json }),
    body: () => JSON.stringify(positions()),
    positions: BATCH_POSITIONS,
    refused: (body) => (JSON.parse(body) as { data: { rejected: number } }).data.rejected,
  });
  const json = { 'content-type': 'application/json' };
  const tripCreateJson: LoadRequest = {
    method: 'POST',
    path: '/fleet/api/v1/trip-location',
    headers: () => ({ ...bearer(), ...json }),
    body: () => JSON.stringify(uniqueTrip()),
  };
  return { bearer, json, batchOf, tripCreateJson };
}
