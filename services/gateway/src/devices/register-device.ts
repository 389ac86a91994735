// Use case: an operator or a fleet app registers a tracker, so that the tracker protocols accept it.
// The answer holds the device's key, shown this once: only its hash is stored.
import { z } from 'zod';
import { maxLength, minLength, typeError } from '@fleet/shared';
import { validationError } from '../validation-error';
import type { Pool } from 'pg';
import { addDevice, type DeviceWithKey } from './device-store';

/** An IMEI as trackers report it: 15 digits. */
export const registeredImeiSchema = z.string({ error: typeError('Expected a string') }).regex(/^\d{15}$/, 'Must be an IMEI: 15 digits');

export const deviceRequestSchema = z.object({
  imei: registeredImeiSchema,
  name: z
    .string({ error: typeError('Expected a string') })
    .check(minLength(1, 'Must not be empty'), maxLength(200, 'Must be at most 200 characters'))
    .optional(),
});

export interface RegistrationResult {
  message: string;
  data: DeviceWithKey;
}

export async function registerDevice(body: unknown, pool: Pool): Promise<RegistrationResult> {
  const parsed = deviceRequestSchema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  const device = await addDevice(pool, parsed.data.imei, parsed.data.name);
  return { message: 'Device has been registered; keep its key, it is not shown again', data: device };
}
