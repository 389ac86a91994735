// The position reads: GET /fleet/api/v1/devices/{imei}/last-location and .../trip-locations. Access is
// decided once, on the whole path prefix, before express decodes the imei: a request without a token (or,
// with JWT_REQUIRED_SCOPES, without positions:read) is refused whatever its path, even an undecodable one.
import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import { AppError } from '@fleet/shared';
import { deviceOf, requireOwnDeviceRead } from '../auth/device-claim';
import { requireScope, SCOPES, verifiedTokenOf, verifyWithScope } from '../auth/require-scope';
import type { TokenVerifier } from '../auth/token-verifier';
import { invalidParameter } from '../positions/position-query';
import type { DeviceStatusReader } from '../positions/device-status';
import type { PositionReader } from '../positions/read-positions';
import { sendError } from './error-handler';
import { queryOf, type RouteHandler } from './route-handler';
import { sendJson } from './send-json';

export const DEVICES_PATH = '/fleet/api/v1/devices';
export const LAST_LOCATION_PATH = `${DEVICES_PATH}/:imei/last-location`;
export const TRIP_LOCATIONS_PATH = `${DEVICES_PATH}/:imei/trip-locations`;
export const DEVICE_PATH = `${DEVICES_PATH}/:imei`;

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

/** An imei like `%zz` fails to decode before any handler runs; it is answered as any bad imei. */
const undecodableImei: ErrorRequestHandler = (error, _req, _res, next) => {
  next(error instanceof URIError ? invalidParameter('imei', 'is not valid percent-encoding') : error);
};

const onlyGet: RequestHandler = (req, res) => {
  res.setHeader('Allow', 'GET, HEAD');
  sendError(res, new AppError({ kind: 'methodNotAllowed', detail: `${req.method} is not served here; use GET` }));
};

export interface PositionReads {
  lastLocation: RouteHandler;
  history: RouteHandler;
}

function positionReads(deps: PositionRoutesDeps): PositionReads {
  return {
    async lastLocation(_req, res, imei) {
      sendJson(res, 200, await deps.reader.lastLocation(imei));
    },
    async history(req, res, imei) {
      sendJson(res, 200, await deps.reader.history(imei, queryOf(req)));
    },
  };
}

/** The reads behind their token and scope check, for the direct routes, which have no prefix middleware. */
export function checkedPositionReads(deps: PositionRoutesDeps): PositionReads {
  const reads = positionReads(deps);
  const checked =
    (read: RouteHandler): RouteHandler =>
    async (req, res, imei) => {
      const token = await verifyWithScope(req.headers.authorization, SCOPES.positionsRead, deps);
      requireOwnDeviceRead(deviceOf(token, deps.deviceClaim), imei);
      await read(req, res, imei);
    };
  return { lastLocation: checked(reads.lastLocation), history: checked(reads.history) };
}

export function addPositionRoutes(router: Express, deps: PositionRoutesDeps): void {
  const reads = positionReads(deps);
  router.use(DEVICES_PATH, requireScope(SCOPES.positionsRead, deps));
  const ownDevice: RequestHandler = (req, res, next) => {
    requireOwnDeviceRead(deviceOf(verifiedTokenOf(res), deps.deviceClaim), req.params.imei as string);
    next();
  };
  router.get(LAST_LOCATION_PATH, ownDevice, (req, res) => reads.lastLocation(req, res, req.params.imei as string));
  router.get(TRIP_LOCATIONS_PATH, ownDevice, (req, res) => reads.history(req, res, req.params.imei as string));
  router.get(DEVICE_PATH, ownDevice, async (req, res) => {
    sendJson(res, 200, await deps.statuses.device(req.params.imei as string));
  });
  router.route(LAST_LOCATION_PATH).all(onlyGet);
  router.route(TRIP_LOCATIONS_PATH).all(onlyGet);
  router.route(DEVICE_PATH).all(onlyGet);
  router.use(DEVICES_PATH, undecodableImei);
}
