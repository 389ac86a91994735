// The two write routes. Order matters: the token (and its scope) is checked before the body is read
// (the route's access check, see access.ts), so an unauthenticated client never costs a parse; once the body is valid the token subject's rate limit
// and its devices' are counted in one Redis call, settled before anything is published, so a refused
// request publishes nothing. Each route is one handler, so a device's post crosses no chain of
// middleware on the hottest path of the product.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import typeis from 'type-is';
import { AppError } from '@fleet/shared/errors';
import type { Topics } from '@fleet/shared/kafka/topics';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '@fleet/shared/schemas/vehicle-group.schema';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf } from '../auth/require-scope';
import type { TokenVerifier, VerifiedToken } from '../auth/token-verifier';
import { NO_DEVICES, type WriteLimits } from '@fleet/write-path/rate-limits/write-limits';
import type { BodyBudget } from './body-budget';
import { refuseBody } from './error-handler';
import { asUtf8, isUtf8Charset, MAX_JSON_DEPTH, nestsDeeperThan } from './json-nesting';
import { createTripLocation, type CommandSender } from '../trip-locations/create-trip-location';
import type { TripRequestSchema } from '@fleet/write-path/trip-request';
import { createVehicleGroup } from '../vehicle-groups/create-vehicle-group';
import { requestIdOf } from './request-id';
import { bodyOf, type Answer, type Middleware, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';

export interface WriteRoutesDeps {
  bus: CommandSender;
  /** The refusal of a write before its body is read (the write path full), if any. */
  refusalBeforeBody: () => AppError | undefined;
  topics: Topics;
  tokens: TokenVerifier;
  /** JWT_REQUIRED_SCOPES: each route demands its scope in the token's `scope` claim. */
  requiredScopes: boolean;
  /** JWT_DEVICE_CLAIM: the claim that restricts a token to one device's positions. */
  deviceClaim: string | undefined;
  bodyLimit: string;
  bodyBudget: BodyBudget;
  limits: WriteLimits;
  /** The trip-location request schema, with the gateway's MAX_FUTURE_SKEW. */
  tripRequest: TripRequestSchema;
}

/**
 * Fields a form body may carry, known or not (unknown ones are ignored): devices send extra fields,
 * and a body of more is answered 413. Body-parser's own default; the byte limit still applies.
 */
export const FORM_FIELDS_MAX = 1000;
export const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Refuses a UTF-8 body holding bytes that are not UTF-8. The parser would otherwise turn them into
 * U+FFFD and a group would be stored under a name its client never sent.
 */
export function requireUtf8(_req: IncomingMessage, _res: ServerResponse, body: Buffer, charset: string): void {
  if (isUtf8Charset(charset) && !isUtf8(body)) {
    throw refuseBody(new AppError({ kind: 'malformedBody', detail: 'the body is not valid UTF-8' }));
  }
}

/**
 * The check of a JSON body's bytes before it is parsed: UTF-8 when it says so (requireUtf8), and nested no
 * deeper than MAX_JSON_DEPTH (json-nesting.ts). `lines`: NDJSON, each line counted on its own.
 */
export function checkJsonBytes(lines: boolean): (req: IncomingMessage, res: ServerResponse, body: Buffer, charset: string) => void {
  return (req, res, body, charset) => {
    requireUtf8(req, res, body, charset);
    if (nestsDeeperThan(asUtf8(body, charset), MAX_JSON_DEPTH, lines)) {
      throw refuseBody(
        new AppError({ kind: 'malformedBody', detail: `the body nests arrays and objects more than ${MAX_JSON_DEPTH} deep` }),
      );
    }
  };
}

/**
 * The JSON body parser of every route. Not strict: `null`, a number or a string is JSON, and is refused
 * by the route's schema naming what it expected, not as a body that could not be parsed.
 */
export function jsonParser(limit: string | number): Middleware {
  return express.json({ limit, type: JSON_TYPE, strict: false, verify: checkJsonBytes(false) });
}

/** Runs a body parser (body-parser's middleware) to completion: req.body is set, or the parser's error is thrown. */
export function parseWith(parser: Middleware, req: IncomingMessage, res: Answer): Promise<void> {
  return new Promise((resolve, reject) => {
    parser(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
  });
}

export interface AcceptedBody {
  type: string;
  token: VerifiedToken;
  /** What the use case calls before publishing: the rate limits of the subject and of these devices. */
  admit(positionsByDevice: ReadonlyMap<string, number>): Promise<void>;
}

/**
 * What every write route does before its use case, once its access check has verified the token:
 * checks the content type, refuses at once when the gateway already has MAX_IN_FLIGHT commands waiting,
 * then reads the body with the parser of that type once the body budget has room for it.
 */
export async function acceptBody(
  deps: WriteRoutesDeps,
  parsers: Record<string, Middleware>,
  req: IncomingMessage,
  res: Answer,
): Promise<AcceptedBody> {
  const token = verifiedTokenOf(res);
  const type = await readBody(deps, parsers, req, res);
  return {
    type,
    token,
    admit: (positionsByDevice) => deps.limits.admit(token.subject, positionsByDevice),
  };
}

/**
 * Counts a fleet app's write that stores no position or group (a geofence, a webhook, a device's
 * registration, settings, key or removal) against its token subject's limit, as the writes that do are
 * counted: rejects with 429 E-R1/1-02 past it, before the write touches anything.
 */
export function admitSubject(deps: Pick<WriteRoutesDeps, 'limits'>, res: Answer): Promise<void> {
  return deps.limits.admit(verifiedTokenOf(res).subject, NO_DEVICES);
}

/**
 * Reads the body with the parser of its content type, once the body budget has room for it; refuses at
 * once when the gateway already has MAX_IN_FLIGHT commands waiting. Answers the type read.
 */
export async function readBody(
  deps: Pick<WriteRoutesDeps, 'refusalBeforeBody' | 'bodyBudget'>,
  parsers: Record<string, Middleware>,
  req: IncomingMessage,
  res: Answer,
): Promise<string> {
  const types = Object.keys(parsers);
  const type = typeis(req, types);
  if (!type) throw new AppError({ kind: 'unsupportedMediaType', detail: `Content-Type must be ${types.join(' or ')}` });
  const full = deps.refusalBeforeBody();
  if (full) throw full;
  const reading = deps.bodyBudget.reserve(req, res);
  try {
    await Promise.race([parseWith(parsers[type]!, req, res), reading.failed]);
  } finally {
    reading.done();
  }
  return type;
}

export function writeHandlers(deps: WriteRoutesDeps): Pick<RouteHandlers, 'createTripLocation' | 'createVehicleGroup'> {
  const parsers: Record<string, Middleware> = {
    [JSON_TYPE]: jsonParser(deps.bodyLimit),
    [FORM_TYPE]: express.urlencoded({
      limit: deps.bodyLimit,
      extended: false,
      parameterLimit: FORM_FIELDS_MAX,
      type: FORM_TYPE,
      verify: requireUtf8,
    }),
  };
  const jsonOnly = { [JSON_TYPE]: parsers[JSON_TYPE]! };

  return {
    async createTripLocation(req, res) {
      const { token, admit } = await acceptBody(deps, parsers, req, res);
      const result = await createTripLocation(bodyOf(req), deviceOf(token, deps.deviceClaim), requestIdOf(res), {
        bus: deps.bus,
        topic: deps.topics.tripLocations,
        admit,
        tripRequest: deps.tripRequest,
      });
      sendJson(res, 200, result);
    },

    async createVehicleGroup(req, res) {
      const { token, admit } = await acceptBody(deps, jsonOnly, req, res);
      // Node joins a repeated header of this kind into one string, as express's req.get() returns it.
      const key = req.headers['idempotency-key'] as string | undefined;
      if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH)) {
        throw new AppError({
          kind: 'validationFailed',
          detail: `Idempotency-Key: must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
          body: { issues: [{ path: 'Idempotency-Key', code: 'invalid_string', message: 'Invalid length' }] },
        });
      }
      const result = await createVehicleGroup(bodyOf(req), { subject: token.subject, key }, requestIdOf(res), {
        bus: deps.bus,
        topic: deps.topics.vehicleGroups,
        admit,
      });
      sendJson(res, 200, result);
    },
  };
}
