// The batch write route: many positions in one request, as a JSON array or as NDJSON, either of them
// gzipped. The token and its scope are checked before the body is read, as on the single route; the body limit
// applies to the decompressed bytes, since body-parser counts what comes out of the inflater.
import express from 'express';
import { AppError } from '@fleet/shared/errors';
import { deviceOf } from '../auth/device-claim';
import { recordTripBatch } from '../trip-locations/record-trip-batch';
import { requestIdOf } from './request-id';
import { bodyOf, type Middleware, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';
import { acceptBody, checkJsonBytes, JSON_TYPE, jsonParser, type WriteRoutesDeps } from './write-routes';

export const NDJSON_TYPE = 'application/x-ndjson';

/** One JSON value per line; blank lines (and a trailing newline) are ignored. */
export function parseNdjson(text: string): unknown[] {
  const values: unknown[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!.trim();
    if (line === '') continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      throw new AppError({ kind: 'malformedBody', detail: `line ${index + 1} is not valid JSON` });
    }
  }
  return values;
}

export function tripBatchHandler(deps: WriteRoutesDeps): Pick<RouteHandlers, 'createTripLocationBatch'> {
  const parsers: Record<string, Middleware> = {
    [JSON_TYPE]: jsonParser(deps.bodyLimit),
    [NDJSON_TYPE]: express.text({ limit: deps.bodyLimit, type: NDJSON_TYPE, defaultCharset: 'utf-8', verify: checkJsonBytes(true) }),
  };

  return {
    async createTripLocationBatch(req, res) {
      const { type, token, admit } = await acceptBody(deps, parsers, req, res);
      const positions: unknown = type === NDJSON_TYPE ? parseNdjson(bodyOf(req) as string) : bodyOf(req);
      const result = await recordTripBatch(positions, deviceOf(token, deps.deviceClaim), requestIdOf(res), {
        bus: deps.bus,
        topic: deps.topics.tripLocations,
        admit,
        tripRequest: deps.tripRequest,
      });
      sendJson(res, 200, result);
    },
  };
}
