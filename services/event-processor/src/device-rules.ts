// The rules that turn a device's positions into events, one position at a time in the device's order:
// ignition changes, speed above the limit, geofences entered and left, and coming back online. Pure: the
// state before and the position in, the state after and the events out; event-store.ts keeps both.
import type { EventType, FleetEvent } from '@fleet/shared/events/fleet-event';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import type { Bounds } from '@fleet/shared/events/ring';
import type { GeofenceArea } from './geofence-area';

export interface DeviceState {
  imei: string;
  /** The newest position processed, by id: one at or below it was processed before (a redelivery). */
  lastPositionId: number;
  /** The newest gpsTime processed, in ms: a position older than it is late and changes nothing. */
  lastGpsTime: number;
  /** When the newest position was received, in ms: what the offline sweep measures silence from. */
  lastReceivedAt: number;
  latitude: number;
  longitude: number;
  /** Unknown until a position reports it. */
  ignition: boolean | null;
  overspeed: boolean;
  geofenceIds: number[];
  offline: boolean;
}

export interface Geofence {
  id: number;
  name: string;
  area: GeofenceArea;
  /** boundsOf(area), computed once: most fixes are ruled out by it alone. */
  bounds: Bounds;
  speedLimitKmh: number | null;
  /** Whether the point lies in the area (geofence-index.ts); `point` is its unit vector, when known. */
  contains(longitude: number, latitude: number, point?: [number, number, number]): boolean;
}

export type RaisedEvent = Omit<FleetEvent, 'id' | 'createdAt'>;

/** The geofences a fix lies in, as the rules read them: found once, read without touching each geofence again. */
export interface Placement {
  /** Their ids, in order. */
  ids: number[];
  /** The geofence of ids[k]. */
  geofence(k: number): Geofence;
  /** The lowest of their speed limits; undefined when none has one. */
  lowestLimitKmh: number | undefined;
}

export interface RuleContext {
  /** The geofences the fix lies in: placed before the batch's transaction (geofence-index.ts). */
  inside: Placement;
  /** Every geofence by id: a fix leaving one names it. */
  geofences: ReadonlyMap<number, Geofence>;
  /** The device's own limit or, without one, OVERSPEED_LIMIT_KMH; undefined: no limit. */
  speedLimitKmh: number | undefined;
}

/** 'seen': processed before; 'late': older than the newest fix processed, so it changes nothing. */
export type Outcome = 'applied' | 'late' | 'seen';

export interface Applied {
  state: DeviceState;
  events: RaisedEvent[];
  outcome: Outcome;
}

/** The lowest of the device's limit and those of the geofences the fix is in. */
function limitAt(context: RuleContext): number | undefined {
  const [own, inside] = [context.speedLimitKmh, context.inside.lowestLimitKmh];
  return own === undefined ? inside : inside === undefined ? own : Math.min(own, inside);
}

export function applyPosition(before: DeviceState | undefined, position: PositionEvent, context: RuleContext): Applied {
  if (before && position.id <= before.lastPositionId) return { state: before, events: [], outcome: 'seen' };
  const gpsTime = Date.parse(position.gpsTime);
  const receivedAt = Math.max(Date.parse(position.receivedAt), before?.lastReceivedAt ?? 0);
  if (before && gpsTime < before.lastGpsTime) {
    // Its receipt still shows the device is there (a tracker emptying its buffer is not offline), but it
    // raises nothing, deviceOnline included: the next current fix does.
    return { state: { ...before, lastPositionId: position.id, lastReceivedAt: receivedAt }, events: [], outcome: 'late' };
  }
  const events: RaisedEvent[] = [];
  const raise = (type: EventType, attributes: Record<string, unknown> = {}) =>
    events.push({
      type,
      imei: position.imei,
      positionId: position.id,
      gpsTime: position.gpsTime,
      latitude: position.latitude,
      longitude: position.longitude,
      attributes,
    });

  if (before?.offline) raise('deviceOnline');

  const ignition = position.ignition ?? before?.ignition ?? null;
  if (position.ignition !== null && before?.ignition != null && position.ignition !== before.ignition) {
    raise(position.ignition ? 'ignitionOn' : 'ignitionOff');
  }

  // Both lists are in id order: one pass finds the geofences left and those entered.
  const { ids: inside } = context.inside;
  const wasInside = before?.geofenceIds ?? [];
  const exits: Geofence[] = [];
  const enters: Geofence[] = [];
  let changed = false;
  for (let i = 0, j = 0; i < wasInside.length || j < inside.length;) {
    if (j >= inside.length || (i < wasInside.length && wasInside[i]! < inside[j]!)) {
      // A geofence deleted since is forgotten without an exit: it no longer exists to be left.
      const left = context.geofences.get(wasInside[i++]!);
      if (left) exits.push(left);
      changed = true;
    } else if (i >= wasInside.length || inside[j]! < wasInside[i]!) {
      enters.push(context.inside.geofence(j++));
      changed = true;
    } else {
      i += 1;
      j += 1;
    }
  }
  for (const fence of exits) raise('geofenceExit', { geofenceId: fence.id, geofenceName: fence.name });
  for (const fence of enters) raise('geofenceEnter', { geofenceId: fence.id, geofenceName: fence.name });

  let overspeed = before?.overspeed ?? false;
  const limit = limitAt(context);
  if (position.speed !== null) {
    const above = limit !== undefined && position.speed > limit;
    if (above && !overspeed) raise('overspeed', { speed: position.speed, speedLimitKmh: limit });
    overspeed = above;
  }

  return {
    state: {
      imei: position.imei,
      lastPositionId: position.id,
      lastGpsTime: gpsTime,
      lastReceivedAt: receivedAt,
      latitude: position.latitude,
      longitude: position.longitude,
      ignition,
      overspeed,
      // Unchanged, the list is kept: a fix inside thousands of geofences makes no new one.
      geofenceIds: before && !changed ? before.geofenceIds : inside,
      offline: false,
    },
    events,
    outcome: 'applied',
  };
}
