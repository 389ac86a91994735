// Use case: an operator or a fleet app manages a device over HTTP: its speed limit (which the event
// processor's overspeed rule reads), its removal from the tracker registry, and a new key for it. A token
// bound to one device may do none of it: a tracker that could change its own limit or key would not need
// the operator any more.
import { z } from 'zod';
import { AppError } from '@fleet/shared/errors';
import { fromDatabase } from '@fleet/shared/db/database-read';
import { validationError } from '@fleet/shared/schemas/validation-error';
import { parseImei } from '../query-parameters';
import type { DeviceWithKey } from './device-store';

/** The highest speed limit taken, in km/h: above it no road vehicle would ever be over its limit. */
export const MAX_SPEED_LIMIT_KMH = 1000;

export const deviceUpdateSchema = z.strictObject({
  speedLimitKmh: z.number().positive().max(MAX_SPEED_LIMIT_KMH).nullable(),
});

/** Where devices are managed (device-store.ts: PostgreSQL). */
export interface DeviceAdministration {
  /** Sets the device's own limit; null removes it, so OVERSPEED_LIMIT_KMH counts again. */
  setSpeedLimit(imei: string, speedLimitKmh: number | null): Promise<void>;
  /** True when the device was registered. */
  removeDevice(imei: string): Promise<boolean>;
  /** Undefined when the device is not registered. */
  rotateKey(imei: string): Promise<DeviceWithKey | undefined>;
}

const notRegistered = (imei: string) => new AppError({ kind: 'deviceNotFound', detail: `device ${imei} is not registered` });

function refuseDeviceToken(device: string | undefined): void {
  if (device !== undefined) throw new AppError({ kind: 'deviceForbidden', detail: 'a token bound to one device may not manage devices' });
}

export function createDeviceManagement(devices: DeviceAdministration) {
  return {
    async update(rawImei: string, body: unknown, device: string | undefined) {
      refuseDeviceToken(device);
      const imei = parseImei(rawImei);
      const parsed = deviceUpdateSchema.safeParse(body);
      if (!parsed.success) throw validationError(parsed.error);
      await fromDatabase(() => devices.setSpeedLimit(imei, parsed.data.speedLimitKmh));
      return { message: 'Device has been updated', data: { imei, speedLimitKmh: parsed.data.speedLimitKmh } };
    },

    async remove(rawImei: string, device: string | undefined) {
      refuseDeviceToken(device);
      const imei = parseImei(rawImei);
      if (!(await fromDatabase(() => devices.removeDevice(imei)))) throw notRegistered(imei);
      return { message: 'Device has been removed; its stored positions stay', data: { imei } };
    },

    async rotateKey(rawImei: string, device: string | undefined) {
      refuseDeviceToken(device);
      const imei = parseImei(rawImei);
      const rotated = await fromDatabase(() => devices.rotateKey(imei));
      if (!rotated) throw notRegistered(imei);
      return { message: 'Device has a new key; keep it, it is not shown again', data: rotated };
    },
  };
}

export type DeviceManagement = ReturnType<typeof createDeviceManagement>;
