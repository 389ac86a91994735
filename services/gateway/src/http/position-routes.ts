// The position reads: GET /fleet/api/v1/devices/{imei}/last-location and .../trip-locations, and a
// device's status. Access is decided once, on the whole path prefix, before express decodes the imei: a
// request without a token (or, with JWT_REQUIRED_SCOPES, without positions:read) is refused whatever its
// path, even an undecodable one (routes.ts's GUARDED_PREFIXES). A token bound to a device reads only it.
import { deviceOf, requireOwnDeviceRead } from '../auth/device-claim';
import { verifiedTokenOf } from '../auth/require-scope';
import type { TokenVerifier } from '../auth/token-verifier';
import type { DeviceStatusReader } from '../positions/device-status';
import type { PositionReader } from '../positions/read-positions';
import { queryOf, type Answer, type RouteHandler, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';

export interface PositionRoutesDeps {
  tokens: TokenVerifier;
  /** JWT_REQUIRED_SCOPES: the token's `scope` claim must hold positions:read. */
  requiredScopes: boolean;
  reader: PositionReader;
  /** Each device's status (GET /fleet/api/v1/devices/{imei} and the list of devices). */
  statuses: DeviceStatusReader;
  /** JWT_DEVICE_CLAIM: a token carrying it reads only its own device's positions. */
  deviceClaim: string | undefined;
}

export function positionHandlers(
  deps: PositionRoutesDeps,
): Pick<RouteHandlers, 'getLastLocation' | 'listTripLocations' | 'getDeviceStatus'> {
  const ownDevice =
    (read: RouteHandler): RouteHandler =>
    async (req, res: Answer, imei) => {
      requireOwnDeviceRead(deviceOf(verifiedTokenOf(res), deps.deviceClaim), imei);
      await read(req, res, imei);
    };
  return {
    getLastLocation: ownDevice(async (_req, res, imei) => {
      sendJson(res, 200, await deps.reader.lastLocation(imei));
    }),
    listTripLocations: ownDevice(async (req, res, imei) => {
      sendJson(res, 200, await deps.reader.history(imei, queryOf(req)));
    }),
    getDeviceStatus: ownDevice(async (_req, res, imei) => {
      sendJson(res, 200, await deps.statuses.device(imei));
    }),
  };
}
