// The OsmAnd protocol's route, for the OsmAnd app and Traccar Client: GET or POST /osmand/{key}, the
// device's key in the path (a URL is all these clients let their users configure). The position is in
// the query string, or in a form or JSON body when the URL carries none. Answered 200 with an empty body
// once every position is committed; any other outcome is a JSON error, and the client sends again.
import type { IncomingMessage } from 'node:http';
import express from 'express';
import { AppError } from '@fleet/shared/errors';
import type { DeviceRegistry } from '@fleet/write-path/devices/device-registry';
import {
  JSON_FIELDS,
  positionFromJson,
  positionFromParameters,
  QUERY_FIELDS,
  type FieldNames,
  type OsmandPosition,
  type SpeedUnit,
} from '../devices/osmand';
import { trackerSubject } from '@fleet/write-path/rate-limits/write-limits';
import { recordTrackerPositions } from '../devices/record-tracker-positions';
import type { TrackerPositionSchema } from '@fleet/write-path/trip-request';
import { MAX_BATCH_POSITIONS } from '../trip-locations/record-trip-batch';
import { requestIdOf } from './request-id';
import { bodyOf, queryOf, type Answer, type Middleware, type RouteHandler, type RouteHandlers } from './route-handler';
import { FORM_FIELDS_MAX, JSON_TYPE, jsonParser, readBody, requireUtf8, type WriteRoutesDeps } from './write-routes';

const FORM_TYPE = 'application/x-www-form-urlencoded';

export interface OsmandRoutesDeps {
  writes: WriteRoutesDeps;
  /** Counts reports acknowledged without being stored: located by cell towers or Wi-Fi alone. */
  countDropped(reason: 'noCoordinates'): void;
  registry: DeviceRegistry;
  trackerPosition: TrackerPositionSchema;
  speedUnit: SpeedUnit;
}

export function osmandHandlers(deps: OsmandRoutesDeps): Pick<RouteHandlers, 'osmandGet' | 'osmandPost'> {
  const parsers: Record<string, Middleware> = {
    // Traccar Client 10 may send an array of locations.
    [JSON_TYPE]: jsonParser(deps.writes.bodyLimit),
    [FORM_TYPE]: express.urlencoded({
      limit: deps.writes.bodyLimit,
      extended: false,
      parameterLimit: FORM_FIELDS_MAX,
      type: FORM_TYPE,
      verify: requireUtf8,
    }),
  };

  /** The positions of the request, with the names its protocol gives their fields. */
  async function positionsOf(
    req: IncomingMessage,
    res: Answer,
  ): Promise<{ positions: Array<OsmandPosition | undefined>; names: FieldNames }> {
    const receivedAt = new Date().toISOString();
    const query = queryOf(req);
    if (Object.keys(query).length > 0 || req.method === 'GET' || !req.headers['content-type']) {
      return { positions: [positionFromParameters(query, deps.speedUnit, receivedAt)], names: QUERY_FIELDS };
    }
    const type = await readBody(deps.writes, parsers, req, res);
    const body = bodyOf(req);
    if (type === FORM_TYPE) {
      return { positions: [positionFromParameters(body as Record<string, string>, deps.speedUnit, receivedAt)], names: QUERY_FIELDS };
    }
    if (!Array.isArray(body)) return { positions: [positionFromJson(body, receivedAt)], names: JSON_FIELDS };
    if (body.length === 0 || body.length > MAX_BATCH_POSITIONS) {
      throw new AppError({ kind: 'validationFailed', detail: `body: Must hold 1 to ${MAX_BATCH_POSITIONS} locations` });
    }
    return { positions: body.map((location) => positionFromJson(location, receivedAt)), names: JSON_FIELDS };
  }

  const handler: RouteHandler = async (req, res, key) => {
    // The key is checked before the body is read: an unknown sender costs no parse.
    const device = await deps.registry.deviceOfKey(key);
    if (device === undefined) throw new AppError({ kind: 'deviceKeyUnknown', detail: 'register the device and use the key it was given' });
    const { positions: reported, names } = await positionsOf(req, res);
    const positions = reported.filter((position) => position !== undefined);
    const { writes } = deps;
    if (positions.length === 0) {
      deps.countDropped('noCoordinates');
      res.writeHead(200, { 'Content-Length': 0 }).end();
      return;
    }
    await recordTrackerPositions(positions, names, device, requestIdOf(res), {
      bus: writes.bus,
      topic: writes.topics.tripLocations,
      trackerPosition: deps.trackerPosition,
      admit: (positionsByDevice) => writes.limits.admit(trackerSubject(device), positionsByDevice),
    });
    res.writeHead(200, { 'Content-Length': 0 }).end();
  };
  return { osmandGet: handler, osmandPost: handler };
}
