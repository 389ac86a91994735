// The OpenAPI description of the event layer's routes: the events read and stream, the webhooks, and the
// device management that feeds the rules (speed limit, removal, key rotation).
import { errorCodes } from '@fleet/shared/errors';
import { EVENT_TYPES } from '@fleet/shared/events/fleet-event';
import { MAX_SPEED_LIMIT_KMH } from '../devices/manage-device';
import { MAX_FILTER_DEVICES } from '../events/events';
import { WEBHOOK_SECRET_MAX_LENGTH, WEBHOOK_SECRET_MIN_LENGTH, webhookRequestSchema } from '../webhooks/webhook.schema';
import type { DocContext, Operations } from './openapi-context';
import { pageQuery } from './openapi-reads';
import { EVENT_REPLAY_LIMIT } from './event-routes';
import { z } from './openapi-zod';

const eventFilters = {
  imei: z
    .array(z.string())
    .max(MAX_FILTER_DEVICES)
    .optional()
    .meta({ description: 'Repeat for each device; none: every device (a token bound to one device: its own)' }),
  type: z.array(z.enum(EVENT_TYPES)).optional().meta({ description: 'Repeat for each type; none: every type' }),
};

export function eventOperations(context: DocContext): Operations {
  const { registry, json, errorBody, writeFailures, streamRefusals, requestIdParameter } = context;
  const unavailable = json(
    errorBody,
    'PostgreSQL unavailable (E-S1/1-03), or the connections the gateway keeps for it all busy (E-S1/1-08)',
    true,
  );
  const forbidden = json(errorBody, "The token lacks the route's scope (E-G1/1-02), or is bound to one device (E-G1/1-03)");
  const Event = registry.register(
    'Event',
    z.strictObject({
      id: z.number().int().meta({ description: 'Grows in commit order: the stream resumes after it' }),
      type: z.enum(EVENT_TYPES),
      imei: z.string(),
      positionId: z.number().int().meta({ description: 'The position that raised it; for deviceOffline, the last one received' }),
      gpsTime: z.string(),
      latitude: z.number(),
      longitude: z.number(),
      createdAt: z.string(),
      attributes: z.record(z.string(), z.unknown()).meta({
        description:
          'overspeed: speed and speedLimitKmh; geofenceEnter and geofenceExit: geofenceId and geofenceName; deviceOffline: lastReceivedAt',
      }),
    }),
  );
  const Webhook = registry.register(
    'Webhook',
    z.strictObject({
      id: z.number().int(),
      url: z.string(),
      types: z.array(z.enum(EVENT_TYPES)).nullable().meta({ description: 'null: every type' }),
    }),
  );
  const WebhookAnswer = z.strictObject({ message: z.string(), data: Webhook });
  const webhookId = z.object({ id: z.string().meta({ description: 'The webhook id, a positive integer', example: '3' }) });
  const webhookNotFound = json(errorBody, `No webhook has this id (${errorCodes.webhookNotFound.code})`);
  const imeiParams = z.object({ imei: z.string().meta({ description: 'The device id', example: '356938035643809' }) });
  const notRegistered = json(errorBody, `The device is not registered (${errorCodes.deviceNotFound.code})`);

  return {
    listEvents: {
      summary: 'List events',
      description: 'Events in id order (the order they were committed), a page at a time.',
      tags: ['Events'],
      request: {
        headers: requestIdParameter,
        query: z.object({
          ...eventFilters,
          from: z.string().optional().meta({ description: 'gpsTime at or after, ISO 8601' }),
          to: z.string().optional().meta({ description: 'gpsTime before, ISO 8601' }),
          ...pageQuery,
        }),
      },
      responses: {
        200: json(z.strictObject({ data: z.array(Event), nextCursor: z.string().nullable() }), 'A page, oldest first'),
        400: json(errorBody, 'A parameter this route does not take (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        503: unavailable,
      },
    },
    streamEvents: {
      summary: 'Live events (Server-Sent Events)',
      description:
        'text/event-stream: `event: <type>`, `id:` the event id, `data:` the event, once it is committed. With Last-Event-ID, the ' +
        `events committed after it come first (at most ${EVENT_REPLAY_LIMIT} a connection; with more the stream ends and the client ` +
        'reconnects from the last one), then the stream goes on live: nothing is missed or sent twice, however many devices it follows.',
      tags: ['Events'],
      request: {
        query: z.object(eventFilters),
        headers: z.object({ 'last-event-id': z.string().optional().meta({ description: 'The id of the last event received' }) }),
      },
      responses: {
        200: { description: 'The stream', content: { 'text/event-stream': { schema: z.string() } } },
        400: json(errorBody, 'A bad imei or type, or a Last-Event-ID that is not an event id (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        ...streamRefusals,
      },
    },
    createWebhook: {
      summary: 'Create a webhook',
      description:
        'Each event of the types asked for is POSTed to the URL as JSON, with X-Fleet-Event-Id, X-Fleet-Timestamp and ' +
        'X-Fleet-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the secret>. A 2xx delivers it; anything else, ' +
        'or no answer in 5 s, is retried with doubling pauses up to 5 minutes for WEBHOOK_RETRY_FOR. At least once: deduplicate on the event id.',
      tags: ['Events'],
      request: {
        headers: requestIdParameter,
        body: {
          required: true,
          content: {
            'application/json': {
              schema: registry.register(
                'WebhookRequest',
                z.object(webhookRequestSchema.shape).meta({
                  description: `The secret: ${WEBHOOK_SECRET_MIN_LENGTH} to ${WEBHOOK_SECRET_MAX_LENGTH} characters, never answered back`,
                }),
              ),
              example: {
                url: 'https://example.com/fleet-events',
                types: ['geofenceEnter', 'geofenceExit'],
                secret: 'a-long-random-secret',
              },
            },
          },
        },
      },
      responses: {
        200: json(WebhookAnswer, 'Created'),
        ...writeFailures,
        400: json(
          context.validationError,
          'An invalid URL, type or secret, or a URL whose host resolves to a loopback, link-local or private address (E-V1/1-01)',
        ),
        403: forbidden,
        409: json(errorBody, `The fleet holds WEBHOOKS_MAX webhooks (${errorCodes.webhooksFull.code}); nothing is stored`),
      },
    },
    listWebhooks: {
      summary: 'List webhooks',
      tags: ['Events'],
      request: { headers: requestIdParameter, query: z.object(pageQuery) },
      responses: {
        200: json(z.strictObject({ data: z.array(Webhook), nextCursor: z.string().nullable() }), 'A page, oldest first'),
        400: json(errorBody, 'A limit or cursor this service does not take (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        503: unavailable,
      },
    },
    getWebhook: {
      summary: 'Read a webhook',
      tags: ['Events'],
      request: { params: webhookId, headers: requestIdParameter },
      responses: {
        200: json(WebhookAnswer, 'The webhook'),
        400: json(errorBody, 'The id is not a positive integer (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        404: webhookNotFound,
        503: unavailable,
      },
    },
    deleteWebhook: {
      summary: 'Delete a webhook',
      description: 'Its deliveries still pending are deleted with it.',
      tags: ['Events'],
      request: { params: webhookId, headers: requestIdParameter },
      responses: {
        200: json(z.strictObject({ message: z.string(), data: z.strictObject({ id: z.number().int() }) }), 'Deleted'),
        400: json(errorBody, 'The id is not a positive integer (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        404: webhookNotFound,
        429: writeFailures[429],
        503: unavailable,
      },
    },
    updateDevice: {
      summary: "Set a device's speed limit",
      description:
        "The overspeed rule uses the lowest of the device's limit (OVERSPEED_LIMIT_KMH without one) and the limits of the geofences " +
        "it is in. null removes the device's own limit. Any device may have one, registered or not.",
      tags: ['Devices'],
      request: {
        params: imeiParams,
        headers: requestIdParameter,
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.strictObject({ speedLimitKmh: z.number().positive().max(MAX_SPEED_LIMIT_KMH).nullable() }),
              example: { speedLimitKmh: 80 },
            },
          },
        },
      },
      responses: {
        200: json(
          z.strictObject({ message: z.string(), data: z.strictObject({ imei: z.string(), speedLimitKmh: z.number().nullable() }) }),
          'Updated',
        ),
        ...writeFailures,
        400: json(context.validationError, `A limit that is not a number above 0 and at most ${MAX_SPEED_LIMIT_KMH}, or null (E-V1/1-01)`),
        403: forbidden,
      },
    },
    removeDevice: {
      summary: 'Remove a tracker from the registry',
      description: 'Its key stops working (gateways see it within 30 s); its stored positions and events stay.',
      tags: ['Devices'],
      request: { params: imeiParams, headers: requestIdParameter },
      responses: {
        200: json(z.strictObject({ message: z.string(), data: z.strictObject({ imei: z.string() }) }), 'Removed'),
        400: json(errorBody, 'Not a device id (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        404: notRegistered,
        429: writeFailures[429],
        503: unavailable,
      },
    },
    rotateDeviceKey: {
      summary: 'Give a tracker a new key',
      description: 'The old key stops working (gateways see it within 30 s); the new one is shown in this answer only.',
      tags: ['Devices'],
      request: { params: imeiParams, headers: requestIdParameter },
      responses: {
        200: json(
          z.strictObject({
            message: z.string(),
            data: z.strictObject({ imei: z.string(), name: z.string().nullable(), key: z.string().regex(/^[A-Za-z0-9_-]{43}$/) }),
          }),
          'The new key',
        ),
        400: json(errorBody, 'Not a device id (E-V1/1-06)'),
        401: json(errorBody, 'No token (E-G1/1-01)'),
        403: forbidden,
        404: notRegistered,
        429: writeFailures[429],
        503: unavailable,
      },
    },
  };
}
