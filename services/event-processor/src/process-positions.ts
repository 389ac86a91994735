// A batch of the positions topic turned into events: the messages decoded (each a list of committed
// positions, a device's in id order), the devices' positions applied in that order to their states, in
// one transaction (event-store.ts). What a redelivery brings again is recognised by the state and skipped.
// The batches of the partitions a fetch brought, handled at once, share that transaction: at 50
// positions a second over 12 partitions, one transaction a fetch instead of a dozen. The costly part, the
// geofences each fix lies in, is found before the transaction opens, and a transaction applies at most
// TRANSACTION_POSITIONS positions, so none stays open long enough for PostgreSQL to end it however many
// geofences there are.
import type { Pool } from 'pg';
import { coalesce } from '@fleet/shared/coalesce';
import type { Logger } from '@fleet/shared/logger';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import { applyPosition, type DeviceState, type Geofence, type Placement, type RaisedEvent } from './device-rules';
import { geofenceCache, HeldGeofences, processBatch } from './event-store';
import { mapInSlices } from './geofence-index';
import type { EventMetrics } from './metrics';

/**
 * The most positions one transaction applies. A transaction that fails halves it for the next, so a
 * batch that overran is split rather than tried again whole; each that commits doubles it back.
 */
export const TRANSACTION_POSITIONS = 500;
/**
 * The most events one transaction raises before it stops taking positions (those left go to the next):
 * a device's first fix inside the worst set the limits allow enters thousands of geofences at once, and
 * 500 such fixes would be over a million events in one statement.
 */
export const TRANSACTION_EVENTS = 20_000;

export interface PositionProcessorOptions {
  pool: Pool;
  logger: Logger;
  metrics: EventMetrics;
  /** OVERSPEED_LIMIT_KMH; 0: devices without a limit of their own have none. */
  defaultSpeedLimitKmh: number;
  /** A batch made webhook deliveries, committed: they can be sent now rather than at the next poll. */
  onDeliveries?: () => void;
}

/** The positions a message carries, or none (logged) for one that is not a list of positions. */
export function decodePositions(value: Buffer | null, logger: Logger): PositionEvent[] {
  if (!value) return [];
  try {
    const decoded: unknown = JSON.parse(value.toString('utf8'));
    if (Array.isArray(decoded)) return decoded as PositionEvent[];
  } catch {
    // Reported below, like a message of any other shape.
  }
  logger.warn({ bytes: value.length }, 'a message on the positions topic is not a list of positions; skipped');
  return [];
}

export function positionProcessor(options: PositionProcessorOptions): (positions: PositionEvent[]) => Promise<void> {
  const { pool, metrics } = options;
  const geofences = geofenceCache(pool);
  let transactionPositions = TRANSACTION_POSITIONS;
  const held = new HeldGeofences();
  const processTogether = coalesce<PositionEvent, void>(async (positions) => {
    await processPositions(positions);
    return positions.map(() => undefined);
  });
  return async (positions) => {
    await processTogether(positions);
  };

  async function processPositions(positions: PositionEvent[]): Promise<void> {
    const sorted = [...positions].sort((a, b) => a.id - b.id);
    const index = await geofences();
    const byDevice = new Map<string, PositionEvent[]>();
    for (const position of sorted) {
      let its = byDevice.get(position.imei);
      if (!its) byDevice.set(position.imei, (its = []));
      its.push(position);
    }
    // A device's positions stay in order across transactions: each reads the state the one before wrote.
    for (let devices = [...byDevice]; devices.length > 0;) {
      const transaction = new Map<string, PositionEvent[]>();
      let count = 0;
      while (devices.length > 0 && count < transactionPositions) {
        const [imei, its] = devices[0]!;
        const taken = its.slice(0, transactionPositions - count);
        transaction.set(imei, taken);
        count += taken.length;
        if (taken.length === its.length) devices.shift();
        else devices[0] = [imei, its.slice(taken.length)];
      }
      // Placed a transaction at a time: a fix inside thousands of geofences carries thousands of ids, and a
      // batch caught up after a lag holds thousands of fixes.
      const fixes = [...transaction.values()].flat();
      const placed = await mapInSlices(fixes, (position) => index.inside(position.longitude, position.latitude));
      const insideOf = new Map(fixes.map((position, i) => [position, placed[i]!]));
      try {
        const left = await applyInTransaction(transaction, insideOf, index.byId);
        // What a transaction left for lack of room goes first into the next, in the device's order.
        devices.unshift(...left);
      } catch (error) {
        transactionPositions = Math.max(1, Math.floor(transactionPositions / 2));
        throw error;
      }
      transactionPositions = Math.min(TRANSACTION_POSITIONS, transactionPositions * 2);
    }
  }

  async function applyInTransaction(
    byDevice: ReadonlyMap<string, PositionEvent[]>,
    insideOf: ReadonlyMap<PositionEvent, Placement>,
    geofencesById: ReadonlyMap<number, Geofence>,
  ): Promise<Array<[string, PositionEvent[]]>> {
    const imeis = [...byDevice.keys()];
    let left: Array<[string, PositionEvent[]]> = [];
    let applied = 0;
    let late = 0;
    let newestReceipt = 0;
    const { raised, deliveries } = await processBatch(
      pool,
      imeis,
      {
        apply(states, limits) {
          applied = 0;
          late = 0;
          left = [];
          const after: DeviceState[] = [];
          const events: RaisedEvent[] = [];
          for (const [imei, its] of byDevice) {
            const speedLimitKmh = limits.get(imei) ?? (options.defaultSpeedLimitKmh || undefined);
            let state = states.get(imei);
            const before = state;
            for (const [k, position] of its.entries()) {
              if (events.length >= TRANSACTION_EVENTS) {
                left.push([imei, its.slice(k)]);
                break;
              }
              const result = applyPosition(state, position, { inside: insideOf.get(position)!, geofences: geofencesById, speedLimitKmh });
              if (result.outcome === 'seen') continue;
              applied += 1;
              if (result.outcome === 'late') late += 1;
              newestReceipt = Math.max(newestReceipt, Date.parse(position.receivedAt));
              state = result.state;
              events.push(...result.events);
            }
            if (state && state !== before) after.push(state);
          }
          return { states: after, events };
        },
      },
      held,
    );
    metrics.positions(applied);
    if (late) metrics.late(late);
    metrics.raised(raised, newestReceipt || undefined);
    if (deliveries) options.onDeliveries?.();
    return left;
  }
}
