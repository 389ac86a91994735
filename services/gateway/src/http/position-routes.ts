// The position reads: GET /fleet/api/v1/devices/{imei}/last-location and .../trip-locations. Access is
// decided once, by `authorize` on the whole path prefix, before express decodes the imei: a request
// without a token is refused whatever its path, even an undecodable one, and a token's other checks
// (scopes, say) belong there too.
import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import { AppError } from '@fleet/shared';
import type { TokenVerifier } from '../auth/token-verifier';
import { invalidParameter } from '../positions/position-query';
import type { PositionReader } from '../positions/read-positions';
import { sendError } from './error-handler';
import { sendJson } from './send-json';

export const DEVICES_PATH = '/fleet/api/v1/devices';
export const LAST_LOCATION_PATH = `${DEVICES_PATH}/:imei/last-location`;
export const TRIP_LOCATIONS_PATH = `${DEVICES_PATH}/:imei/trip-locations`;

export interface PositionRoutesDeps {
  tokens: TokenVerifier;
  reader: PositionReader;
}

/** An imei like `%zz` fails to decode before any handler runs; it is answered as any bad imei. */
const undecodableImei: ErrorRequestHandler = (error, _req, _res, next) => {
  next(error instanceof URIError ? invalidParameter('imei', 'is not valid percent-encoding') : error);
};

const onlyGet: RequestHandler = (req, res) => {
  res.setHeader('Allow', 'GET, HEAD');
  sendError(res, new AppError({ kind: 'methodNotAllowed', detail: `${req.method} is not served here; use GET` }));
};

export function addPositionRoutes(router: Express, deps: PositionRoutesDeps): void {
  const authorize: RequestHandler = async (req, _res, next) => {
    await deps.tokens.verify(req.headers.authorization);
    next();
  };

  router.use(DEVICES_PATH, authorize);
  router.get(LAST_LOCATION_PATH, async (req, res) => {
    sendJson(res, 200, await deps.reader.lastLocation(req.params.imei));
  });
  router.get(TRIP_LOCATIONS_PATH, async (req, res) => {
    sendJson(res, 200, await deps.reader.history(req.params.imei, req.query as Record<string, unknown>));
  });
  router.route(LAST_LOCATION_PATH).all(onlyGet);
  router.route(TRIP_LOCATIONS_PATH).all(onlyGet);
  router.use(DEVICES_PATH, undecodableImei);
}
