// The two write routes. Order matters: the token is checked before the body is read, so an
// unauthenticated client never costs a parse, and a refused request publishes nothing. Each route is
// one handler, so a device's post crosses no chain of middleware on the hottest path of the product.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { AppError, type CommandBus, type Topics } from '@fleet/shared';
import type { TokenVerifier } from '../auth/token-verifier';
import { createTripLocation } from '../trip-locations/create-trip-location';
import { createVehicleGroup } from '../vehicle-groups/create-vehicle-group';
import { requestIdOf } from './request-id';
import { sendJson } from './send-json';

export const TRIP_LOCATION_PATH = '/fleet/api/v1/trip-location';
export const VEHICLE_GROUP_PATH = '/fleet/api/v1/vehicle-group';

export interface WriteRoutesDeps {
  bus: CommandBus;
  topics: Topics;
  tokens: TokenVerifier;
  bodyLimit: string;
}

const IDEMPOTENCY_KEY_MAX = 200;
const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Refuses a UTF-8 body holding bytes that are not UTF-8. The parser would otherwise turn them into
 * U+FFFD and a group would be stored under a name its client never sent.
 */
function requireUtf8(_req: IncomingMessage, _res: ServerResponse, body: Buffer, charset: string): void {
  if (/^utf-?8$/i.test(charset) && !isUtf8(body)) {
    throw new AppError({ kind: 'malformedBody', detail: 'the body is not valid UTF-8' });
  }
}

/** Runs a body parser (express middleware) to completion: req.body is set, or the parser's error is thrown. */
function parseWith(parser: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void parser(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
  });
}

export function addWriteRoutes(router: Express, deps: WriteRoutesDeps): void {
  const parsers: Record<string, RequestHandler> = {
    [JSON_TYPE]: express.json({ limit: deps.bodyLimit, type: JSON_TYPE, verify: requireUtf8 }),
    [FORM_TYPE]: express.urlencoded({ limit: deps.bodyLimit, extended: false, parameterLimit: 100, type: FORM_TYPE, verify: requireUtf8 }),
  };

  /** Checks the token, then the content type, then reads the body with the parser of that type. */
  async function acceptBody(req: Request, res: Response, types: string[]): Promise<unknown> {
    await deps.tokens.verify(req.headers.authorization);
    const type = req.is(types);
    if (!type) throw new AppError({ kind: 'unsupportedMediaType', detail: `Content-Type must be ${types.join(' or ')}` });
    await parseWith(parsers[type]!, req, res);
    return req.body;
  }

  router.post(TRIP_LOCATION_PATH, async (req, res) => {
    const body = await acceptBody(req, res, [JSON_TYPE, FORM_TYPE]);
    const result = await createTripLocation(body, requestIdOf(res), { bus: deps.bus, topic: deps.topics.tripLocations });
    sendJson(res, 200, result);
  });

  router.post(VEHICLE_GROUP_PATH, async (req, res) => {
    const body = await acceptBody(req, res, [JSON_TYPE]);
    const key = req.get('idempotency-key');
    if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
      throw new AppError({
        kind: 'validationFailed',
        detail: `Idempotency-Key: must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
        body: { issues: [{ path: 'Idempotency-Key', code: 'invalid_string', message: 'Invalid length' }] },
      });
    }
    const result = await createVehicleGroup(body, key, requestIdOf(res), { bus: deps.bus, topic: deps.topics.vehicleGroups });
    sendJson(res, 200, result);
  });
}
