// The registry as the tracker protocols ask it, on every message: which device a key belongs to (OsmAnd)
// and whether an IMEI is registered, with since when its key is the one it has (Teltonika's handshake and
// every packet after it, so that a session of a device removed or re-keyed is closed). Answers are kept for a while, so that a
// busy device costs no database read per message and a flood of unknown keys costs one read per key;
// a device removed or given a new key is refused within REGISTRY_CACHE_MS on every gateway.
// A database that cannot answer is a retry-safe 503 (fromDatabase), never a refusal of a registered device.
import { fromDatabase } from '@fleet/shared/db/database-read';
import { DEVICE_KEY_PATTERN, hashDeviceKey } from './device-keys';

/** How long a known key or a registered IMEI is trusted without asking the database again. */
export const REGISTRY_CACHE_MS = 30_000;
/** How long an unknown key or IMEI is remembered as unknown: short, so a device just registered works soon. */
export const UNKNOWN_CACHE_MS = 5_000;
/** Entries kept at most; the oldest go first. */
const MAX_ENTRIES = 100_000;

/** A registered device as a session sees it. */
export interface Registration {
  /** Epoch milliseconds since when the device's key is the one it has (registered, or last rotated). */
  keySince: number;
}

export interface RegistryLookups {
  deviceOfKeyHash(keyHash: Buffer): Promise<string | undefined>;
  deviceRegistration(imei: string): Promise<Registration | undefined>;
}

interface Entry<T> {
  value: T;
  until: number;
}

/** A bounded map whose entries expire; Map keeps insertion order, so the first entry is the oldest. */
class ExpiringCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  get(key: string, now: number): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, until: number): void {
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until });
  }
}

export class DeviceRegistry {
  private readonly byKey = new ExpiringCache<string | null>();
  private readonly registered = new ExpiringCache<Registration | null>();

  constructor(
    private readonly lookups: RegistryLookups,
    private readonly now: () => number = Date.now,
  ) {}

  /** The device a key belongs to, or undefined for a key that is not registered. */
  async deviceOfKey(key: string): Promise<string | undefined> {
    if (!DEVICE_KEY_PATTERN.test(key)) return undefined;
    const hash = hashDeviceKey(key);
    const cacheKey = hash.toString('base64');
    const now = this.now();
    const cached = this.byKey.get(cacheKey, now);
    if (cached !== undefined) return cached ?? undefined;
    const imei = await fromDatabase(() => this.lookups.deviceOfKeyHash(hash));
    this.byKey.set(cacheKey, imei ?? null, now + (imei === undefined ? UNKNOWN_CACHE_MS : REGISTRY_CACHE_MS));
    return imei;
  }

  /** The device's registration, or undefined when it is not registered. */
  async registration(imei: string): Promise<Registration | undefined> {
    const now = this.now();
    const cached = this.registered.get(imei, now);
    if (cached !== undefined) return cached ?? undefined;
    const known = await fromDatabase(() => this.lookups.deviceRegistration(imei));
    this.registered.set(imei, known ?? null, now + (known ? REGISTRY_CACHE_MS : UNKNOWN_CACHE_MS));
    return known;
  }
}
