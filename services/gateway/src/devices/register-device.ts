// Use case: an operator or a fleet app registers a tracker, so that the tracker protocols accept it.
// The answer holds the device's key, shown this once: only its hash is stored.
import { z } from 'zod';
import { AppError } from '@fleet/shared/errors';
import { displayName } from '@fleet/shared/schemas/display-name';
import { imeiSchema } from '@fleet/shared/schemas/trip-location.schema';
import { validationError } from '@fleet/shared/schemas/validation-error';
import type { DeviceWithKey } from './device-store';

export const DEVICE_NAME_MAX_LENGTH = 200;

export const deviceRequestSchema = z.object({
  // Any device id the positions take: a Teltonika tracker's is its IMEI, while Traccar Client's default
  // identifier is a short number, and an operator may give a phone any id.
  imei: imeiSchema,
  name: displayName(DEVICE_NAME_MAX_LENGTH).optional(),
});

/** Where devices are registered (device-store.ts: the registry's table in PostgreSQL). */
export interface DeviceEnrolment {
  /** Adds the device with a new key; refuses one already registered with a conflict. */
  addDevice(imei: string, name: string | undefined): Promise<DeviceWithKey>;
}

export interface RegistrationResult {
  message: string;
  data: DeviceWithKey;
}

/**
 * `device`: the only device the caller's token may act for, or undefined when it is not restricted. A
 * tracker's own token manages no registry, its own entry included: it would let one device register others.
 */
export async function registerDevice(body: unknown, device: string | undefined, devices: DeviceEnrolment): Promise<RegistrationResult> {
  if (device !== undefined) throw new AppError({ kind: 'deviceForbidden', detail: 'a token bound to one device may not register devices' });
  const parsed = deviceRequestSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  const registered = await devices.addDevice(parsed.data.imei, parsed.data.name);
  return { message: 'Device has been registered; keep its key, it is not shown again', data: registered };
}
