// Device tokens: when JWT_DEVICE_CLAIM names a claim (e.g. `imei`) and a token carries it, that token
// writes only positions of that device. A token without the claim (a fleet application's) is not
// restricted by it.
import { AppError } from '@fleet/shared';
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

/** A position about to be written, with its place in a batch when it came in one. */
export interface PositionOwner {
  imei: string;
  index?: number;
}

/** Refuses (403 E-G1/1-03) the request when any of its positions belongs to a device other than the token's. */
export function requireOwnDevice(device: string | undefined, positions: readonly PositionOwner[]): void {
  if (device === undefined) return;
  const foreign = positions.find((position) => position.imei !== device);
  if (!foreign) return;
  const where = foreign.index === undefined ? 'imei' : `position ${foreign.index}: imei`;
  throw new AppError({ kind: 'deviceForbidden', detail: `${where} is not the device this token is for` });
}
