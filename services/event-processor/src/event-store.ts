// SQL for the event processor. A batch of positions is one transaction: the devices' states are read
// with their rows locked, the rules applied (device-rules.ts), the new states written, and the events
// inserted with a delivery row for each webhook that wants them, all committed together. Kafka's offsets
// can then lag behind without harm: a position redelivered after a crash finds its device's state past
// it and raises nothing again. Event ids are taken under one advisory lock held until commit, so they
// grow in commit order: a reader resuming after an id (the events stream) misses nothing. A batch's
// statements are named, so each connection plans them once rather than once a batch.
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '@fleet/shared/db/transaction';
import { EVENTS_CHANNEL, type EventType } from '@fleet/shared/events/fleet-event';
import type { DeviceState, Geofence, RaisedEvent } from './device-rules';
import { indexGeofences, mapInSlices, placedGeofence, type GeofenceIndex } from './geofence-index';

/** The advisory lock every event insert takes; any constant no other feature uses. */
const EVENT_ORDER_LOCK = 7_734_001;

interface StateRow {
  imei: string;
  last_position_id: string;
  last_gps_time: Date;
  last_received_at: Date;
  latitude: number;
  longitude: number;
  ignition: boolean | null;
  overspeed: boolean;
  /** As text, and only when it is not the list `held` already has for this state (see SELECT_STATES). */
  geofence_ids: string | null;
  offline: boolean;
}

/**
 * Each device's geofence list as this processor last read or wrote it, with the position its state was
 * at: SELECT_STATES then sends a list only when the stored state is at another position. At most
 * HELD_IDS ids in all are held, the least lately written device forgotten first (a device forgotten is
 * read whole again).
 */
type Held = ReadonlyMap<string, { lastPositionId: number; ids: number[] }>;

export class HeldGeofences {
  private readonly held = new Map<string, { lastPositionId: number; ids: number[] }>();

  private ids = 0;

  constructor(private readonly capacity = HELD_IDS) {}

  /** What is held of these devices, as it is now. */
  of(imeis: readonly string[]): Held {
    return new Map(imeis.flatMap((imei) => (this.held.has(imei) ? [[imei, this.held.get(imei)!] as const] : [])));
  }

  remember(states: readonly DeviceState[]): void {
    for (const state of states) {
      this.forget(state.imei);
      this.held.set(state.imei, { lastPositionId: state.lastPositionId, ids: state.geofenceIds });
      this.ids += state.geofenceIds.length;
      while (this.ids > this.capacity && this.held.size > 0) this.forget(this.held.keys().next().value!);
    }
  }

  private forget(imei: string): void {
    this.ids -= this.held.get(imei)?.ids.length ?? 0;
    this.held.delete(imei);
  }
}

/**
 * Ids held at most, some 16 MiB: a fleet's devices each inside a few geofences, or a few thousand devices
 * inside thousands (the worst set the limits allow puts every fix in some 2,700).
 */
const HELD_IDS = 2_000_000;

/** `{1,2,3}`, bigint[]'s text, as numbers: far cheaper than the driver's parser of arrays for thousands of ids. */
const idsOf = (text: string): number[] => (text === '{}' ? [] : text.slice(1, -1).split(',').map(Number));

const toState = (row: StateRow, held: Held): DeviceState => ({
  imei: row.imei,
  lastPositionId: Number(row.last_position_id),
  lastGpsTime: row.last_gps_time.getTime(),
  lastReceivedAt: row.last_received_at.getTime(),
  latitude: row.latitude,
  longitude: row.longitude,
  ignition: row.ignition,
  overspeed: row.overspeed,
  geofenceIds: row.geofence_ids === null ? held.get(row.imei)!.ids : idsOf(row.geofence_ids),
  offline: row.offline,
});

// A state's geofence list is sent only when the processor does not hold it already: a device inside
// thousands of geofences has thousands of ids, and reading them for every batch cost more than the rest of
// its fix. The list held is the one written with the state's last_position_id ($2, $3): a state at that
// position has that list, whoever wrote it, since a position is applied once.
const SELECT_STATES = `
  SELECT s.imei, s.last_position_id, s.last_gps_time, s.last_received_at, s.latitude, s.longitude, s.ignition, s.overspeed,
         CASE WHEN h.last_position_id IS DISTINCT FROM s.last_position_id THEN s.geofence_ids::text END AS geofence_ids, s.offline
  FROM event_device_states s LEFT JOIN unnest($2::text[], $3::bigint[]) AS h(imei, last_position_id) ON h.imei = s.imei
  WHERE s.imei = ANY($1::text[]) ORDER BY s.imei FOR UPDATE OF s`;

/**
 * A state whose geofence list is as it was read is written with this one instead ($9 of UPSERT_STATES),
 * and the stored list is kept: no geofence id is negative.
 */
const KEEP_GEOFENCES = '{-1}';

// A device's own limit is read in the same round trip as the states, which it does not lock.
const SELECT_LIMITS = `SELECT imei, speed_limit_kmh FROM device_settings WHERE imei = ANY($1::text[]) AND speed_limit_kmh IS NOT NULL`;

const UPSERT_STATES = `
  INSERT INTO event_device_states
    (imei, last_position_id, last_gps_time, last_received_at, latitude, longitude, ignition, overspeed, geofence_ids, offline)
  SELECT imei, last_position_id, last_gps_time, last_received_at, latitude, longitude, ignition, overspeed,
         geofence_ids::bigint[], offline
  FROM unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::timestamptz[], $5::float8[], $6::float8[], $7::boolean[],
              $8::boolean[], $9::text[], $10::boolean[])
    AS s(imei, last_position_id, last_gps_time, last_received_at, latitude, longitude, ignition, overspeed, geofence_ids, offline)
  ON CONFLICT (imei) DO UPDATE SET
    last_position_id = excluded.last_position_id, last_gps_time = excluded.last_gps_time,
    last_received_at = excluded.last_received_at, latitude = excluded.latitude, longitude = excluded.longitude,
    ignition = excluded.ignition, overspeed = excluded.overspeed,
    geofence_ids = CASE WHEN excluded.geofence_ids = '${KEEP_GEOFENCES}' THEN event_device_states.geofence_ids ELSE excluded.geofence_ids END,
    offline = excluded.offline`;

const INSERT_EVENTS = `
  INSERT INTO events (type, imei, position_id, gps_time, latitude, longitude, attributes)
  SELECT type, imei, position_id, gps_time, latitude, longitude, attributes
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::float8[], $6::float8[], $7::jsonb[])
    WITH ORDINALITY AS e(type, imei, position_id, gps_time, latitude, longitude, attributes, n)
  ORDER BY n
  ON CONFLICT (imei, type, position_id, (coalesce(attributes->>'geofenceId', ''))) DO NOTHING
  RETURNING id, type`;

// The deliveries, and the notification the gateways' streams wait for (delivered at commit), in one round trip.
const INSERT_DELIVERIES_AND_NOTIFY = `
  WITH deliveries AS (
    INSERT INTO webhook_deliveries (webhook_id, event_id)
    SELECT w.id, e.id FROM webhooks w
    JOIN unnest($1::bigint[], $2::text[]) AS e(id, type) ON w.types IS NULL OR e.type = ANY (w.types)
    RETURNING 1
  )
  SELECT pg_notify($3, $4), (SELECT count(*) FROM deliveries)::int AS deliveries`;

// Silence is measured from what was received and committed (device_last_locations.last_seen_at, which
// the trip-writer moves in the commit of every position, filtered ones included), not only from what
// this processor has caught up to: a processor lagging behind, or back from an outage, would otherwise
// mark every active device offline, and raise deviceOnline for it a moment later. Rows a processor holds
// are skipped: a device with a position in flight is not silent.
const SWEEP_OFFLINE = `
  UPDATE event_device_states s SET offline = true
  FROM (
    SELECT st.imei, greatest(st.last_received_at, l.last_seen_at) AS last_received_at
    FROM event_device_states st LEFT JOIN device_last_locations l ON l.imei = st.imei
    WHERE NOT st.offline AND st.last_received_at < now() - make_interval(secs => $1)
      AND (l.last_seen_at IS NULL OR l.last_seen_at < now() - make_interval(secs => $1))
    ORDER BY st.imei LIMIT $2 FOR UPDATE OF st SKIP LOCKED
  ) due
  WHERE s.imei = due.imei
  RETURNING s.imei, s.last_position_id, s.last_gps_time, s.latitude, s.longitude, due.last_received_at`;

/** Devices marked offline per sweep statement, so that one sweep never holds many row locks. */
const SWEEP_CHUNK = 500;

/** What a batch stored: the types of the events new to the table, and the webhook deliveries they made. */
interface Inserted {
  raised: EventType[];
  deliveries: number;
}

/** Inserts the events (those raised before are skipped) and their deliveries. */
async function insertEvents(client: PoolClient, events: readonly RaisedEvent[]): Promise<Inserted> {
  if (events.length === 0) return { raised: [], deliveries: 0 };
  await client.query({ name: 'events-order-lock', text: 'SELECT pg_advisory_xact_lock($1)', values: [EVENT_ORDER_LOCK] });
  const inserted = await client.query<{ id: string; type: EventType }>({
    name: 'events-insert',
    text: INSERT_EVENTS,
    values: [
      events.map((e) => e.type),
      events.map((e) => e.imei),
      events.map((e) => e.positionId),
      events.map((e) => e.gpsTime),
      events.map((e) => e.latitude),
      events.map((e) => e.longitude),
      events.map((e) => JSON.stringify(e.attributes)),
    ],
  });
  if (inserted.rows.length === 0) return { raised: [], deliveries: 0 };
  const ids = inserted.rows.map((row) => row.id);
  const made = await client.query<{ deliveries: number }>({
    name: 'events-insert-deliveries',
    text: INSERT_DELIVERIES_AND_NOTIFY,
    values: [ids, inserted.rows.map((row) => row.type), EVENTS_CHANNEL, ids[ids.length - 1]],
  });
  return { raised: inserted.rows.map((row) => row.type), deliveries: made.rows[0]!.deliveries };
}

export interface BatchWork {
  /**
   * Applies the rules to the devices' positions, given their states (undefined: never seen) and their
   * own speed limits (for those that have one).
   */
  apply(states: ReadonlyMap<string, DeviceState>, limits: ReadonlyMap<string, number>): { states: DeviceState[]; events: RaisedEvent[] };
}

/** One batch in one transaction: the states locked and read, the rules applied, states and events written. */
export async function processBatch(pool: Pool, imeis: readonly string[], work: BatchWork, held: HeldGeofences): Promise<Inserted> {
  let written: DeviceState[] = [];
  const known = held.of(imeis);
  const inserted = await inTransaction(pool, async (client) => {
    const [rows, limits] = await Promise.all([
      // Unnamed, unlike the writes: a lookup by a list of devices named on a near-empty table keeps a
      // sequential scan as its generic plan while the table grows (docs/performance-history.md, "The quiet fleet").
      client.query<StateRow>(SELECT_STATES, [imeis, [...known.keys()], [...known.values()].map((each) => each.lastPositionId)]),
      client.query<{ imei: string; speed_limit_kmh: number }>(SELECT_LIMITS, [imeis]),
    ]);
    const read = new Map(rows.rows.map((row) => [row.imei, toState(row, known)]));
    const { states, events } = work.apply(read, new Map(limits.rows.map((row) => [row.imei, row.speed_limit_kmh])));
    written = states;
    if (states.length) {
      await client.query({
        name: 'events-upsert-states',
        text: UPSERT_STATES,
        values: [
          states.map((s) => s.imei),
          states.map((s) => s.lastPositionId),
          states.map((s) => new Date(s.lastGpsTime).toISOString()),
          states.map((s) => new Date(s.lastReceivedAt).toISOString()),
          states.map((s) => s.latitude),
          states.map((s) => s.longitude),
          states.map((s) => s.ignition),
          states.map((s) => s.overspeed),
          // The rules keep a list that did not change as the very one read.
          states.map((s) => (s.geofenceIds === read.get(s.imei)?.geofenceIds ? KEEP_GEOFENCES : `{${s.geofenceIds.join(',')}}`)),
          states.map((s) => s.offline),
        ],
      });
    }
    return insertEvents(client, events);
  });
  held.remember(written);
  return inserted;
}

const GEOFENCES_VERSION = "SELECT count(*) || ':' || coalesce(max(id), 0) AS version FROM geofences";

interface GeofenceRow {
  id: string;
  name: string;
  area: Geofence['area'];
  speed_limit_kmh: number | null;
}

const toGeofence = (row: GeofenceRow): Geofence =>
  placedGeofence({ id: Number(row.id), name: row.name, area: row.area, speedLimitKmh: row.speed_limit_kmh });

/**
 * The geofences' index, read again only when they changed: a create moves the highest id, a delete the count.
 * One small query per batch keeps a geofence created a moment ago in force for the next fix. A change
 * reads the ids, then only the geofences not held yet: a fleet's geofences may be hundreds of thousands
 * of positions, and a create or delete must not make every processor parse them all again.
 */
export function geofenceCache(db: Pick<Pool, 'query'>): () => Promise<GeofenceIndex> {
  let version = '';
  let held = new Map<number, Geofence>();
  let index = indexGeofences([]);
  return async () => {
    const { rows } = await db.query<{ version: string }>({ name: 'events-geofences-version', text: GEOFENCES_VERSION });
    if (rows[0]!.version === version) return index;
    const ids = (await db.query<{ id: string }>('SELECT id FROM geofences ORDER BY id')).rows.map((row) => Number(row.id));
    const missing = ids.filter((id) => !held.has(id));
    if (missing.length > 0) {
      const added = await db.query<GeofenceRow>('SELECT id, name, area, speed_limit_kmh FROM geofences WHERE id = ANY($1::bigint[])', [
        missing,
      ]);
      for (const fence of await mapInSlices(added.rows, toGeofence)) held.set(fence.id, fence);
    }
    // A geofence deleted between the two reads is absent from the second: it is left out here too.
    held = new Map(ids.flatMap((id) => (held.has(id) ? [[id, held.get(id)!] as const] : [])));
    index = indexGeofences([...held.values()]);
    version = rows[0]!.version;
    return index;
  };
}

/** Marks the devices silent for `afterMs` offline and raises their deviceOffline; answers how many, and the deliveries made. */
export async function sweepOffline(pool: Pool, afterMs: number): Promise<{ raised: number; deliveries: number }> {
  let raised = 0;
  let deliveries = 0;
  for (;;) {
    const marked = await inTransaction(pool, async (client) => {
      const due = await client.query<{
        imei: string;
        last_position_id: string;
        last_gps_time: Date;
        latitude: number;
        longitude: number;
        last_received_at: Date;
      }>(SWEEP_OFFLINE, [afterMs / 1000, SWEEP_CHUNK]);
      const offline = await insertEvents(
        client,
        due.rows.map((row) => ({
          type: 'deviceOffline',
          imei: row.imei,
          positionId: Number(row.last_position_id),
          gpsTime: row.last_gps_time.toISOString(),
          latitude: row.latitude,
          longitude: row.longitude,
          attributes: { lastReceivedAt: row.last_received_at.toISOString() },
        })),
      );
      raised += offline.raised.length;
      deliveries += offline.deliveries;
      return due.rows.length;
    });
    if (marked < SWEEP_CHUNK) return { raised, deliveries };
  }
}
