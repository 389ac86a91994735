import { AppError } from '@fleet/shared/errors';
import { newDeviceKey, hashDeviceKey } from './device-keys';
import { DeviceRegistry, REGISTRY_CACHE_MS, UNKNOWN_CACHE_MS } from './device-registry';

/** An in-memory registry standing in for the devices table, counting the lookups it answers. */
function table(devices: Record<string, string>) {
  const byHash = new Map(Object.entries(devices).map(([key, imei]) => [hashDeviceKey(key).toString('hex'), imei]));
  const lookups = { byKey: 0, byImei: 0 };
  return {
    lookups,
    remove(key: string) {
      byHash.delete(hashDeviceKey(key).toString('hex'));
    },
    deviceOfKeyHash: async (hash: Buffer) => {
      lookups.byKey += 1;
      return byHash.get(hash.toString('hex'));
    },
    deviceRegistration: async (imei: string) => {
      lookups.byImei += 1;
      return [...byHash.values()].includes(imei) ? { keySince: 0 } : undefined;
    },
  };
}

describe('DeviceRegistry', () => {
  const key = newDeviceKey();
  let now = 0;
  const clock = () => now;
  beforeEach(() => (now = 1_000_000));

  test('finds a key’s device once, then answers from memory until the cache time is over', async () => {
    const devices = table({ [key]: '356938035643809' });
    const registry = new DeviceRegistry(devices, clock);
    for (let i = 0; i < 100; i += 1) expect(await registry.deviceOfKey(key)).toBe('356938035643809');
    expect(devices.lookups.byKey).toBe(1);
    devices.remove(key);
    now += REGISTRY_CACHE_MS - 1;
    expect(await registry.deviceOfKey(key)).toBe('356938035643809');
    now += 1;
    expect(await registry.deviceOfKey(key)).toBeUndefined();
    expect(devices.lookups.byKey).toBe(2);
  });

  test('remembers an unknown key for a short while only, and never asks about a key not of the issued shape', async () => {
    const devices = table({});
    const registry = new DeviceRegistry(devices, clock);
    expect(await registry.deviceOfKey(key)).toBeUndefined();
    expect(await registry.deviceOfKey(key)).toBeUndefined();
    expect(devices.lookups.byKey).toBe(1);
    now += UNKNOWN_CACHE_MS;
    await registry.deviceOfKey(key);
    expect(devices.lookups.byKey).toBe(2);
    expect(await registry.deviceOfKey('short')).toBeUndefined();
    expect(await registry.deviceOfKey(`${key}/`)).toBeUndefined();
    expect(devices.lookups.byKey).toBe(2);
  });

  test('tells registered IMEIs from others, each asked once within the cache time', async () => {
    const devices = table({ [key]: '356938035643809' });
    const registry = new DeviceRegistry(devices, clock);
    expect(await registry.registration('356938035643809')).toEqual({ keySince: 0 });
    expect(await registry.registration('356938035643809')).toEqual({ keySince: 0 });
    expect(await registry.registration('490154203237518')).toBeUndefined();
    expect(devices.lookups.byImei).toBe(2);
  });

  test('a database that cannot answer is a retry-safe 503, and nothing is remembered of it', async () => {
    let down = true;
    const registry = new DeviceRegistry(
      {
        deviceOfKeyHash: async () => {
          if (down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return '356938035643809';
        },
        deviceRegistration: async () => ({ keySince: 0 }),
      },
      clock,
    );
    const refusal = await registry.deviceOfKey(key).catch((error: AppError) => error);
    expect(refusal).toMatchObject({ code: 'E-S1/1-03', retryAfterSeconds: 1 });
    down = false;
    expect(await registry.deviceOfKey(key)).toBe('356938035643809');
  });
});
