// The OpenAPI description of the fleet apps' reads beyond positions: a device's status, the devices by
// status, and vehicle groups read back. Part of the document openapi.ts builds, as openapi-devices.ts is:
// the schemas are made when the document is built.
import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { errorCodes } from '@fleet/shared';
import { SCOPES } from '../auth/require-scope';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../positions/position-query';
import { VEHICLE_GROUPS_PATH } from './group-routes';
import { MAX_STREAM_DEVICES, STREAM_PATH } from './stream-routes';
import { DEVICES_PATH } from './position-routes';
import { VEHICLE_GROUP_PATH } from './write-routes';

export interface ReadsContext {
  registry: OpenAPIRegistry;
  bearerName: string;
  errorBody: z.ZodType;
  /** The registered Position schema, as the last-location read answers it. */
  position: z.ZodType;
  json(schema: z.ZodType, description: string, retry?: boolean): ResponseConfig;
  requestIdParameter: z.ZodObject;
}

export function registerReadPaths(context: ReadsContext): void {
  const { registry, json, errorBody, bearerName } = context;
  const page = {
    limit: z
      .string()
      .optional()
      .meta({ description: `1 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}` }),
    cursor: z.string().optional().meta({ description: 'The nextCursor of the previous page' }),
  };
  const status = z.strictObject({
    imei: z.string(),
    name: z.string().nullable().optional().meta({ description: 'Present when the device is registered' }),
    lastSeenAt: z.string().nullable().meta({ description: 'When its newest position was received; null when never heard from' }),
    lastPosition: context.position.nullable(),
    status: z.enum(['online', 'offline']).meta({ description: 'offline when nothing was received for DEVICE_OFFLINE_AFTER (10m)' }),
  });
  const DeviceStatus = registry.register('DeviceStatus', status);
  const group = z.strictObject({
    id: z.number().int(),
    vehicleGroupName: z.string(),
    vehicleIds: z.array(z.number().int()).meta({ description: 'Each once, ascending' }),
    createdAt: z.string(),
  });
  const VehicleGroup = registry.register('VehicleGroup', group);
  const failures = {
    401: json(errorBody, 'No token (E-G1/1-01)'),
    503: json(errorBody, 'PostgreSQL unavailable (E-S1/1-03)', true),
  };

  registry.registerPath({
    method: 'get',
    path: `${DEVICES_PATH}/{imei}`,
    operationId: 'getDeviceStatus',
    summary: "A device's status",
    tags: ['Devices'],
    security: [{ [bearerName]: [SCOPES.positionsRead] }],
    request: { params: z.object({ imei: z.string() }), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ message: z.string(), data: DeviceStatus }), 'The device'),
      400: json(errorBody, 'A bad imei (E-V1/1-06)'),
      403: json(errorBody, 'A token bound to another device (E-G1/1-03), or lacking positions:read (E-G1/1-02)'),
      404: json(errorBody, `Neither registered nor ever heard from (${errorCodes.deviceNotFound.code})`),
      ...failures,
    },
  });
  registry.registerPath({
    method: 'get',
    path: DEVICES_PATH,
    operationId: 'listDevices',
    summary: 'Devices, registered or seen, by status',
    description: 'Keyset-paged by IMEI: follow nextCursor until it is null; each device is answered once.',
    tags: ['Devices'],
    security: [{ [bearerName]: [SCOPES.positionsRead] }],
    request: { query: z.object({ status: z.enum(['online', 'offline']).optional(), ...page }), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ data: z.array(DeviceStatus), nextCursor: z.string().nullable() }), 'A page of devices'),
      400: json(errorBody, 'A bad status, limit or cursor (E-V1/1-06, detail starts with its name)'),
      403: json(errorBody, 'A token bound to one device (E-G1/1-03), or lacking positions:read (E-G1/1-02)'),
      ...failures,
    },
  });
  registry.registerPath({
    method: 'get',
    path: `${VEHICLE_GROUP_PATH}/{id}`,
    operationId: 'getVehicleGroup',
    summary: 'A vehicle group',
    tags: ['Fleet'],
    security: [{ [bearerName]: [SCOPES.groupsRead] }],
    request: { params: z.object({ id: z.string() }), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ message: z.string(), data: VehicleGroup }), 'The group'),
      400: json(errorBody, 'An id that is not a positive integer (E-V1/1-06)'),
      403: json(errorBody, 'A token lacking groups:read (E-G1/1-02)'),
      404: json(errorBody, `No group has this id (${errorCodes.groupNotFound.code})`),
      ...failures,
    },
  });
  registry.registerPath({
    method: 'get',
    path: VEHICLE_GROUPS_PATH,
    operationId: 'listVehicleGroups',
    summary: 'Vehicle groups, oldest first',
    description: 'Keyset-paged by id: follow nextCursor until it is null; each group is answered once.',
    tags: ['Fleet'],
    security: [{ [bearerName]: [SCOPES.groupsRead] }],
    request: { query: z.object(page), headers: context.requestIdParameter },
    responses: {
      200: json(z.strictObject({ data: z.array(VehicleGroup), nextCursor: z.string().nullable() }), 'A page of groups'),
      400: json(errorBody, 'A bad limit or cursor (E-V1/1-06, detail starts with its name)'),
      403: json(errorBody, 'A token lacking groups:read (E-G1/1-02)'),
      ...failures,
    },
  });
  registry.registerPath({
    method: 'get',
    path: STREAM_PATH,
    operationId: 'streamPositions',
    summary: 'Live positions (Server-Sent Events)',
    description:
      'text/event-stream: one `event: position` per committed position of the devices named, `id:` the row id, `data:` the ' +
      'position as last-location answers it. With Last-Event-ID, the positions stored after that id (received in the last ' +
      'hour, at most 10,000) come first, then the stream goes on live. A comment every 15 s keeps proxies from closing it; ' +
      'a client reading too slowly is cut off. Refusals are JSON, before the stream starts.',
    tags: ['Fleet'],
    security: [{ [bearerName]: [SCOPES.positionsRead] }],
    request: {
      query: z.object({ imei: z.array(z.string()).min(1).max(MAX_STREAM_DEVICES).meta({ description: 'Repeat for each device' }) }),
      headers: z.object({ 'last-event-id': z.string().optional().meta({ description: 'The id of the last event received' }) }),
    },
    responses: {
      200: { description: 'The stream', content: { 'text/event-stream': { schema: z.string() } } },
      400: json(errorBody, 'No imei, more than 1,000, a bad imei, or a Last-Event-ID that is not an event id (E-V1/1-06)'),
      403: json(errorBody, 'A token bound to another device (E-G1/1-03), or lacking positions:read (E-G1/1-02)'),
      401: json(errorBody, 'No token (E-G1/1-01)'),
      503: json(errorBody, `This gateway serves MAX_STREAMS streams already (${errorCodes.tooManyStreams.code})`, true),
    },
  });
}
