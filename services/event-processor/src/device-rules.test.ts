import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import { applyPosition, type DeviceState, type Geofence } from './device-rules';
import { indexGeofences, placedGeofence } from './geofence-index';

const depot = placedGeofence({
  id: 7,
  name: 'Depot',
  area: { type: 'Circle', center: [13.4, 52.5], radiusMeters: 500 },
  speedLimitKmh: 30,
});

let nextId = 1;
function fix(overrides: Partial<PositionEvent> = {}): PositionEvent {
  const id = nextId++;
  return {
    id,
    imei: '356307042441013',
    gpsTime: new Date(Date.UTC(2026, 10, 1, 8, 0, id)).toISOString(),
    latitude: 52.6,
    longitude: 13.4,
    speed: 10,
    ignition: null,
    angle: null,
    satellite: null,
    door1: null,
    door2: null,
    temp: null,
    fuel_percentage: null,
    attributes: null,
    receivedAt: new Date().toISOString(),
    ...overrides,
  };
}

interface Rules {
  geofences: Geofence[];
  speedLimitKmh: number | undefined;
}

const noRules: Rules = { geofences: [], speedLimitKmh: undefined };

/** Applies one fix, placed in the geofences as the processor places it. */
function apply(state: DeviceState | undefined, position: PositionEvent, rules: Rules = noRules) {
  const index = indexGeofences(rules.geofences);
  const inside = index.inside(position.longitude, position.latitude);
  return applyPosition(state, position, { inside, geofences: index.byId, speedLimitKmh: rules.speedLimitKmh });
}

/** Applies the fixes in turn; answers every event type raised, in order. */
function run(fixes: PositionEvent[], rules: Rules = noRules, from?: DeviceState) {
  let state = from;
  const types: string[] = [];
  for (const position of fixes) {
    const result = apply(state, position, rules);
    state = result.state;
    types.push(...result.events.map((event) => event.type));
  }
  return { state: state!, types };
}

describe('device rules', () => {
  it('raises ignitionOn and ignitionOff on a change of a known ignition, nothing when it is unknown', () => {
    const { types } = run([
      fix({ ignition: true }),
      fix({ ignition: null }),
      fix({ ignition: true }),
      fix({ ignition: false }),
      fix({ ignition: true }),
    ]);
    expect(types).toEqual(['ignitionOff', 'ignitionOn']);
  });

  it('raises overspeed once above the limit, and again only after coming back under it', () => {
    const context = { geofences: [], speedLimitKmh: 80 };
    const speeds = [70, 90, 100, 85, 60, 95];
    expect(
      run(
        speeds.map((speed) => fix({ speed })),
        context,
      ).types,
    ).toEqual(['overspeed', 'overspeed']);
  });

  it("counts the lower of the device's limit and a geofence's it is inside", () => {
    const context = { geofences: [depot], speedLimitKmh: 80 };
    const inside = fix({ latitude: 52.5, longitude: 13.4, speed: 40 });
    const result = apply(undefined, inside, context);
    expect(result.events.map((e) => [e.type, e.attributes])).toEqual([
      ['geofenceEnter', { geofenceId: 7, geofenceName: 'Depot' }],
      ['overspeed', { speed: 40, speedLimitKmh: 30 }],
    ]);
  });

  it('raises geofenceEnter and geofenceExit as the fixes cross the area', () => {
    const context = { geofences: [depot], speedLimitKmh: undefined };
    const path = [fix(), fix({ latitude: 52.5 }), fix({ latitude: 52.501 }), fix({ latitude: 52.6 })];
    expect(run(path, context).types).toEqual(['geofenceEnter', 'geofenceExit']);
  });

  it('changes nothing and raises nothing for a fix older than the newest processed', () => {
    const context = { geofences: [depot], speedLimitKmh: undefined };
    const { state } = run([fix({ latitude: 52.6, ignition: true })], context);
    const old = fix({ latitude: 52.5, ignition: false, gpsTime: '2026-01-01T00:00:00.000Z' });
    const result = apply(state, old, context);
    expect(result.outcome).toBe('late');
    expect(result.events).toEqual([]);
    expect(result.state).toEqual({ ...state, lastPositionId: old.id, lastReceivedAt: Date.parse(old.receivedAt) });
  });

  it('recognises a position processed before and raises nothing for it', () => {
    const first = fix({ ignition: true });
    const second = fix({ ignition: false });
    const { state } = run([first, second]);
    expect(apply(state, second)).toEqual({ state, events: [], outcome: 'seen' });
  });

  it('raises deviceOnline with the first position of a device marked offline', () => {
    const { state } = run([fix()]);
    const result = apply({ ...state, offline: true }, fix());
    expect(result.events.map((e) => e.type)).toEqual(['deviceOnline']);
    expect(result.state.offline).toBe(false);
  });
});
