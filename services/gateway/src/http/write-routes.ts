// The two write routes. Order matters: the token is checked before the body is read, so an
// unauthenticated client never costs a parse, and a refused request publishes nothing.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { Router, type RequestHandler } from 'express';
import { AppError, type CommandBus, type Topics } from '@fleet/shared';
import type { TokenVerifier } from '../auth/token-verifier';
import { createTripLocation } from '../trip-locations/create-trip-location';
import { createVehicleGroup } from '../vehicle-groups/create-vehicle-group';
import { requestIdOf } from './request-id';

export const TRIP_LOCATION_PATH = '/fleet/api/v1/trip-location';
export const VEHICLE_GROUP_PATH = '/fleet/api/v1/vehicle-group';

export interface WriteRoutesDeps {
  bus: CommandBus;
  topics: Topics;
  tokens: TokenVerifier;
  bodyLimit: string;
}

const IDEMPOTENCY_KEY_MAX = 200;

function requireToken(tokens: TokenVerifier): RequestHandler {
  return async (req, _res, next) => {
    await tokens.verify(req.headers.authorization);
    next();
  };
}

function requireContentType(...types: string[]): RequestHandler {
  return (req, _res, next) => {
    if (!req.is(types)) {
      throw new AppError({ kind: 'unsupportedMediaType', detail: `Content-Type must be ${types.join(' or ')}` });
    }
    next();
  };
}

/**
 * Refuses a UTF-8 body holding bytes that are not UTF-8. The parser would otherwise turn them into
 * U+FFFD and a group would be stored under a name its client never sent.
 */
function requireUtf8(_req: IncomingMessage, _res: ServerResponse, body: Buffer, charset: string): void {
  if (/^utf-?8$/i.test(charset) && !isUtf8(body)) {
    throw new AppError({ kind: 'malformedBody', detail: 'the body is not valid UTF-8' });
  }
}

export function writeRoutes(deps: WriteRoutesDeps): Router {
  const router = Router();
  const json = express.json({ limit: deps.bodyLimit, type: 'application/json', verify: requireUtf8 });
  const form = express.urlencoded({
    limit: deps.bodyLimit,
    extended: false,
    parameterLimit: 100,
    type: 'application/x-www-form-urlencoded',
    verify: requireUtf8,
  });

  router.post(
    TRIP_LOCATION_PATH,
    requireToken(deps.tokens),
    requireContentType('application/json', 'application/x-www-form-urlencoded'),
    json,
    form,
    async (req, res) => {
      const result = await createTripLocation(req.body, requestIdOf(res), { bus: deps.bus, topic: deps.topics.tripLocations });
      res.json(result);
    },
  );

  router.post(
    VEHICLE_GROUP_PATH,
    requireToken(deps.tokens),
    requireContentType('application/json'),
    json,
    async (req, res) => {
      const key = req.get('idempotency-key');
      if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
        throw new AppError({
          kind: 'validationFailed',
          detail: `Idempotency-Key: must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
          body: { issues: [{ path: 'Idempotency-Key', code: 'invalid_string', message: 'Invalid length' }] },
        });
      }
      const result = await createVehicleGroup(req.body, key, requestIdOf(res), {
        bus: deps.bus,
        topic: deps.topics.vehicleGroups,
      });
      res.json(result);
    },
  );
  return router;
}
