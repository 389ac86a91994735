// The gateway's HTTP surface: the express application with its routes and the middleware every route
// shares, and in front of it the direct routes, which serve the hot paths' canonical requests with the
// same handlers and the same front steps without crossing express.
import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from '@fleet/shared/logger';
import type { ApiKeyAuth } from '../api-keys/api-key-auth';
import type { DeviceEnrolment } from '../devices/register-device';
import type { DeviceManagement } from '../devices/manage-device';
import type { Geofences } from '../geofences/geofences';
import type { Webhooks } from '../webhooks/webhooks';
import type { GatewayMetrics } from '../metrics';
import { accessCheck } from './access';
import { categoryHandlers, undecodableCategoryId, type CategoryRoutesDeps } from './category-routes';
import { refuseTransferCodings } from './client-errors';
import { deviceHandlers } from './device-routes';
import { directListener } from './direct-routes';
import { answerError, errorHandler, notFound } from './error-handler';
import { eventHandlers, type EventRoutesDeps } from './event-routes';
import { geofenceHandlers } from './geofence-routes';
import { webhookHandlers } from './webhook-routes';
import { groupHandlers, type GroupRoutesDeps } from './group-routes';
import { healthHandlers, type HealthDeps } from './health-routes';
import { observeRequests } from './observe-requests';
import { operationsHandlers } from './operations-routes';
import { osmandHandlers, type OsmandRoutesDeps } from './osmand-routes';
import { positionHandlers, type PositionRoutesDeps } from './position-routes';
import { addRoutes } from './register-routes';
import { assignRequestId } from './request-id';
import type { Middleware, RouteHandlers } from './route-handler';
import { CATEGORY_BASE_PATH } from './routes';
import { OpenStreams, type StreamLimits } from './sse';
import { streamHandler, type StreamRoutesDeps } from './stream-routes';
import { tripBatchHandler } from './trip-batch-route';
import { writeHandlers, type WriteRoutesDeps } from './write-routes';

export interface AppDeps {
  logger: Logger;
  trustProxy: boolean;
  health: HealthDeps;
  writes: WriteRoutesDeps;
  /** The API keys the category read accepts. */
  apiKeys: Pick<ApiKeyAuth, 'requireKey'>;
  categories: CategoryRoutesDeps;
  positions: PositionRoutesDeps;
  groups: GroupRoutesDeps;
  geofences: Geofences;
  events: EventRoutesDeps;
  webhooks: Webhooks;
  streams: StreamRoutesDeps;
  /** MAX_STREAMS and MAX_STREAMS_PER_SUBJECT, counted over both stream routes. */
  streamLimits: StreamLimits;
  /** Where the register route adds devices. */
  enrolment: DeviceEnrolment;
  /** Where the device routes set limits, remove devices and rotate keys. */
  management: DeviceManagement;
  /** What the tracker protocols' routes need besides the write routes' dependencies. */
  trackers: Omit<OsmandRoutesDeps, 'writes' | 'countDropped'>;
  metrics: GatewayMetrics;
}

export interface Http {
  /** The express app, for tests that read its route table. */
  app: Express;
  /** The server's request listener: the direct routes, then the app. */
  listener: RequestListener;
  /** The live position and event streams, ended when the gateway stops. */
  streams: Pick<OpenStreams, 'closeAll'>;
}

export function createHttp(deps: AppDeps): Http {
  // Every answer, JSON or the docs page, carries the usual security headers: nosniff, a
  // Content-Security-Policy (scripts and styles from this origin only, frame-ancestors 'self'),
  // X-Frame-Options and the rest of helmet's defaults. The policy does not upgrade requests to HTTPS:
  // the gateway is also reached over plain HTTP inside a cluster, where /docs would then fail to load.
  const front: Middleware[] = [
    helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }),
    assignRequestId,
    observeRequests(deps.metrics, deps.logger),
    refuseTransferCodings,
  ];
  const streams = new OpenStreams({ ...deps.streamLimits, metrics: deps.metrics });
  // One handler a route of the table (routes.ts), by its name.
  const handlers: RouteHandlers = {
    ...categoryHandlers(deps.categories),
    ...writeHandlers(deps.writes),
    ...tripBatchHandler(deps.writes),
    ...deviceHandlers({ writes: deps.writes, positions: deps.positions, enrolment: deps.enrolment, management: deps.management }),
    ...groupHandlers(deps.groups),
    ...geofenceHandlers({ writes: deps.writes, geofences: deps.geofences }),
    ...eventHandlers(deps.events, streams),
    ...webhookHandlers({ writes: deps.writes, webhooks: deps.webhooks }),
    ...streamHandler(deps.streams, streams),
    ...positionHandlers(deps.positions),
    ...osmandHandlers({
      ...deps.trackers,
      writes: deps.writes,
      countDropped: (reason) => deps.metrics.countTrackerPositionDropped(reason),
    }),
    ...healthHandlers(deps.health),
    ...operationsHandlers(deps.metrics.registry),
  };
  const check = accessCheck({ apiKeys: deps.apiKeys, tokens: deps.positions.tokens, requiredScopes: deps.positions.requiredScopes });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.use(front);
  // Routes sit on the app itself rather than in nested routers: each router a request crosses costs a
  // pass over its stack.
  addRoutes(app, {
    handlers,
    check,
    undecodable: [{ prefix: CATEGORY_BASE_PATH, handler: undecodableCategoryId }],
  });
  app.use(notFound);
  // One answerer for both paths, so a run of 503s is logged once whichever path answered them.
  const answer = answerError(deps.logger);
  app.use(errorHandler(answer));

  const listener = directListener({ app, handlers, check, front, answerError: answer });
  return { app, listener, streams };
}
