// Device tokens: when JWT_DEVICE_CLAIM names a claim (e.g. `imei`) and a token carries it, that token
// writes and reads only positions of that device. A token without the claim (a fleet application's) is
// not restricted by it.
import { AppError } from '@fleet/shared/errors';
import type { VerifiedToken } from './token-verifier';

/**
 * The device a token is restricted to, or undefined when it is not. The claim is compared as text: a
 * string as it is, a whole number (an issuer writing the IMEI as a JSON number) in decimal. Any other
 * value names no device this service can compare with, so such a token writes no position at all.
 */
export function deviceOf(token: VerifiedToken, claimName: string | undefined): string | undefined {
  if (claimName === undefined) return undefined;
  const claim = token.claims[claimName];
  if (claim === undefined) return undefined;
  if (typeof claim === 'string') return claim;
  if (typeof claim === 'number' && Number.isSafeInteger(claim) && claim >= 0) return String(claim);
  throw new AppError({ kind: 'deviceForbidden', detail: `the token's ${claimName} claim is neither a string nor a whole number` });
}

/** The device a position names, as sent: its `imei` when that is text. */
function imeiNamedBy(position: unknown): string | undefined {
  if (typeof position !== 'object' || position === null) return undefined;
  const { imei } = position as { imei?: unknown };
  return typeof imei === 'string' ? imei : undefined;
}

/**
 * Refuses (403 E-G1/1-03) a request in which any position names a device other than the token's,
 * whatever else is wrong with that position: checked on the body as sent, before validation, so that
 * an attempt to write another device's position is always answered as one. A position naming no device
 * (imei missing, or not text) is left to validation. `batch`: the positions came as a batch, and
 * the detail names the first foreign one by its index.
 */
export function requireOwnDevice(device: string | undefined, positions: readonly unknown[], batch: boolean): void {
  if (device === undefined) return;
  const index = positions.findIndex((position) => {
    const imei = imeiNamedBy(position);
    return imei !== undefined && imei !== device;
  });
  if (index < 0) return;
  const where = batch ? `[${index}].imei` : 'imei';
  throw new AppError({ kind: 'deviceForbidden', detail: `${where}: not the device this token is for` });
}

/** Refuses (403 E-G1/1-03) a read of another device's positions by a token restricted to its own. */
export function requireOwnDeviceRead(device: string | undefined, imei: string): void {
  if (device === undefined || device === imei) return;
  throw new AppError({ kind: 'deviceForbidden', detail: 'imei: not the device this token is for' });
}
