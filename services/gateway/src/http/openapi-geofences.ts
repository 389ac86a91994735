// The OpenAPI description of the geofences: created from a GeoJSON Polygon or a circle, read back one by
// id or a page at a time, deleted. The request body is the schema the route validates with.
import { errorCodes } from '@fleet/shared/errors';
import { GEOFENCE_NAME_MAX_LENGTH, geofenceRequestSchema, MAX_GEOFENCE_VERTICES } from '../geofences/geofence.schema';
import type { DocContext, Operations } from './openapi-context';
import { pageQuery } from './openapi-reads';
import { z } from './openapi-zod';

const example = {
  name: 'Depot',
  area: { type: 'Circle', center: [106.8456, -6.2088], radiusMeters: 500 },
  speedLimitKmh: 20,
};

export function geofenceOperations(context: DocContext): Operations {
  const { registry, json, errorBody, writeFailures, requestIdParameter } = context;
  const GeofenceRequest = registry.register(
    'GeofenceRequest',
    z.object(geofenceRequestSchema.shape).openapi({
      description:
        `A name of 1 to ${GEOFENCE_NAME_MAX_LENGTH} characters; an area, a GeoJSON Polygon ([longitude, latitude] positions, ` +
        `each ring closed, enclosing an area and not crossing or touching itself, each further ring a hole inside the first and apart ` +
        `from it and the other holes, at most ${MAX_GEOFENCE_VERTICES} positions) or a circle; an optional speed limit inside it`,
    }),
  );
  const Geofence = registry.register(
    'Geofence',
    z.strictObject({
      id: z.number().int(),
      name: z.string(),
      area: geofenceRequestSchema.shape.area,
      speedLimitKmh: z.number().nullable().openapi({ description: 'null when the geofence has no limit of its own' }),
    }),
  );
  const GeofenceAnswer = registry.register('GeofenceResponse', z.strictObject({ message: z.string(), data: Geofence }));
  const idParams = z.object({ id: z.string().openapi({ description: 'The geofence id, a positive integer', example: '7' }) });
  const notFound = json(errorBody, `No geofence has this id (${errorCodes.geofenceNotFound.code})`);
  const unavailable = json(
    errorBody,
    'PostgreSQL unavailable (E-S1/1-03), or the connections the gateway keeps for it all busy (E-S1/1-08)',
    true,
  );
  const forbidden = json(errorBody, "The token lacks the route's scope (E-G1/1-02), or is bound to one device (E-G1/1-03)");

  return {
    createGeofence: {
      summary: 'Create a geofence',
      description: 'A geofence applies to every device: the events of its fixes entering and leaving it, and its speed limit.',
      tags: ['Geofences'],
      request: {
        headers: requestIdParameter,
        body: { required: true, content: { 'application/json': { schema: GeofenceRequest, example } } },
      },
      responses: {
        200: json(GeofenceAnswer, 'Created'),
        ...writeFailures,
        400: json(
          context.validationError,
          'An invalid name or area: a polygon not closed, enclosing nothing, crossing itself, with a hole astray, or too large (E-V1/1-01)',
        ),
        403: forbidden,
        409: json(
          errorBody,
          `The fleet holds GEOFENCES_MAX geofences, or this polygon would take their positions past GEOFENCES_MAX_POSITIONS (${errorCodes.geofencesFull.code}); \`detail\` says which; nothing is stored`,
        ),
      },
    },
    listGeofences: {
      summary: 'List geofences',
      tags: ['Geofences'],
      request: {
        headers: requestIdParameter,
        query: z.object(pageQuery),
      },
      responses: {
        200: json(z.strictObject({ data: z.array(Geofence), nextCursor: z.string().nullable() }), 'A page, oldest first'),
        400: json(errorBody, 'A limit or cursor this service does not take (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        503: unavailable,
      },
    },
    getGeofence: {
      summary: 'Read a geofence',
      tags: ['Geofences'],
      request: { params: idParams, headers: requestIdParameter },
      responses: {
        200: json(GeofenceAnswer, 'The geofence'),
        400: json(errorBody, 'The id is not a positive integer (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        404: notFound,
        503: unavailable,
      },
    },
    deleteGeofence: {
      summary: 'Delete a geofence',
      tags: ['Geofences'],
      request: { params: idParams, headers: requestIdParameter },
      responses: {
        200: json(z.strictObject({ message: z.string(), data: z.strictObject({ id: z.number().int() }) }), 'Deleted'),
        400: json(errorBody, 'The id is not a positive integer (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        404: notFound,
        429: writeFailures[429],
        503: unavailable,
      },
    },
  };
}
