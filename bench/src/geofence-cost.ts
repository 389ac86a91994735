// What the geofences cost a fix, in the event processor as `npm start` runs it: the same paced creates
// from devices of their own, measured with no geofence, then with the worst set the limits allow
// (worst-geofences.ts), in one run. The goal: the worst set costs a fix at most GEOFENCE_COST_GOAL times
// its cost with none. Each device's first fix inside the set enters thousands of geofences at once, so
// the devices are warmed on it before the window is measured: what is measured is a fix's cost, not
// that burst of enters.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { load, type LoadRequest } from './load-driver';
import { processCpuSeconds } from './process-cpu';
import { seeded, worstGeofenceSet } from './worst-geofences';

export const GEOFENCE_COST_SECTION = {
  start: '<!-- geofence cost: written by `npm run bench:events` from bench/results/geofence-cost.json; do not edit by hand -->',
  end: '<!-- end of geofence cost -->',
};

export const GEOFENCE_COST_GOAL = 10;
const DEVICES = 100;
const RATE = 500;
const SECONDS = 10;
const CONNECTIONS = 50;

export interface GeofenceCostRun {
  startedAt: string;
  rate: number;
  seconds: number;
  /** The event processor's CPU per position, in µs, with no geofence and with the worst set. */
  none: number;
  worst: number;
  geofences: number;
  failures: number;
}

export function geofenceCostTable(run: GeofenceCostRun): string {
  const ratio = run.worst / run.none;
  return [
    `Run of ${run.startedAt}: ${run.rate} creates a second for ${run.seconds} s from ${DEVICES} devices each way, ${run.failures} not answered 200.`,
    '',
    '| event processor CPU per position | value | goal |',
    '|---|---:|---|',
    `| no geofence | ${run.none.toFixed(0)} µs | |`,
    `| the worst set the limits allow (${run.geofences} geofences, every box the globe) | ${run.worst.toFixed(0)} µs | |`,
    `| worst set against none | ${ratio.toFixed(1)}× | at most ${GEOFENCE_COST_GOAL}×: ${ratio <= GEOFENCE_COST_GOAL ? 'met' : 'missed'} |`,
  ].join('\n');
}

interface Phase {
  gatewayUrl: string;
  token: string;
  pool: Pool;
  processorPid: number;
  log: (line: string) => void;
}

/** Paced creates from `prefix`'s devices, each toggling its ignition; answers the processor's CPU per position once all are processed. */
async function measured(phase: Phase, prefix: string): Promise<{ perPositionUs: number; failures: number }> {
  let sequence = 0;
  const startMs = Date.now() - 60 * 60_000;
  const request: LoadRequest = {
    method: 'POST',
    path: '/fleet/api/v1/trip-location',
    headers: { authorization: `Bearer ${phase.token}`, 'content-type': 'application/json' },
    body: () => {
      sequence += 1;
      return JSON.stringify({
        imei: `${prefix}${sequence % DEVICES}`,
        gpsTime: new Date(startMs + Math.floor(sequence / DEVICES) * 1000).toISOString(),
        latitude: -6.2 + (sequence % DEVICES) * 0.001,
        longitude: 106.8,
        speed: 30,
        ignition: Math.floor(sequence / DEVICES) % 2 === 0,
      });
    },
  };
  // Warmed first: each device's first fix (and, with the worst set, its thousands of enters) before the window.
  await load(phase.gatewayUrl, request, CONNECTIONS, 2, DEVICES);
  await settled(phase.pool, prefix);
  const warmed = sequence;
  const before = processCpuSeconds(phase.processorPid)!;
  const { result } = await load(phase.gatewayUrl, request, CONNECTIONS, SECONDS, RATE);
  await settled(phase.pool, prefix);
  const cpu = processCpuSeconds(phase.processorPid)! - before;
  return { perPositionUs: (cpu * 1e6) / (sequence - warmed), failures: result.errors + result.timeouts + result.non2xx };
}

/** Waits until the processor has applied every committed position of `prefix`'s devices. */
async function settled(pool: Pool, prefix: string): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ behind: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM device_last_locations l LEFT JOIN event_device_states s ON s.imei = l.imei
                      WHERE l.imei LIKE $1 AND (s.imei IS NULL OR s.last_position_id < l.trip_location_id)) AS behind`,
      [`${prefix}%`],
    );
    if (!rows[0]!.behind) return;
    await sleep(500);
  }
}

export async function geofenceCost(phase: Phase, run: string): Promise<GeofenceCostRun> {
  const startedAt = new Date().toISOString();
  await phase.pool.query("DELETE FROM geofences WHERE name LIKE 'worst-%'");
  phase.log(`geofence cost: ${RATE} creates a second for ${SECONDS} s with no geofence`);
  const none = await measured(phase, `${run}g0-`);
  const set = worstGeofenceSet(seeded(72));
  await phase.pool.query('INSERT INTO geofences (name, area, positions) SELECT * FROM unnest($1::text[], $2::jsonb[], $3::int[])', [
    set.map((fence) => fence.name),
    set.map((fence) => JSON.stringify(fence.area)),
    set.map((fence) => (fence.area.type === 'Polygon' ? fence.area.coordinates.reduce((sum, ring) => sum + ring.length, 0) : 0)),
  ]);
  try {
    phase.log(`geofence cost: the same with the worst set (${set.length} geofences)`);
    const worst = await measured(phase, `${run}g1-`);
    return {
      startedAt,
      rate: RATE,
      seconds: SECONDS,
      none: none.perPositionUs,
      worst: worst.perPositionUs,
      geofences: set.length,
      failures: none.failures + worst.failures,
    };
  } finally {
    await phase.pool.query("DELETE FROM geofences WHERE name LIKE 'worst-%'");
  }
}
