// The gateway's HTTP surface: the express application with its routes and the middleware every route
// shares, and in front of it the direct routes, which serve the hot paths' canonical requests with the
// same handlers and the same front steps without crossing express.
import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Pool } from 'pg';
import type { Logger } from '@fleet/shared';
import { addCategoryRoutes, keyedCategoryRead, type CategoryRoutesDeps } from './category-routes';
import type { GatewayMetrics } from '../metrics';
import { refuseTransferCodings } from './client-errors';
import { directListener } from './direct-routes';
import { answerError, errorHandler, notFound } from './error-handler';
import { addHealthRoutes, type HealthDeps } from './health-routes';
import { observeRequests } from './observe-requests';
import { addOperationsRoutes } from './operations-routes';
import { addPositionRoutes, checkedPositionReads, type PositionRoutesDeps } from './position-routes';
import { addDeviceRoutes } from './device-routes';
import { addGroupRoutes, type GroupRoutesDeps } from './group-routes';
import { addOsmandRoutes, type OsmandRoutesDeps } from './osmand-routes';
import { assignRequestId } from './request-id';
import { addStreamRoutes, type StreamRoutesDeps, type Streams } from './stream-routes';
import type { Middleware } from './route-handler';
import { addTripBatchRoute, tripBatchHandler } from './trip-batch-route';
import { addWriteRoutes, writeHandlers, type WriteRoutesDeps } from './write-routes';

export interface AppDeps {
  logger: Logger;
  trustProxy: boolean;
  health: HealthDeps;
  writes: WriteRoutesDeps;
  categories: CategoryRoutesDeps;
  positions: PositionRoutesDeps;
  groups: GroupRoutesDeps;
  streams: StreamRoutesDeps;
  /** The device registry's table, for registering devices. */
  pool: Pool;
  /** What the tracker protocols' routes need besides the write routes' dependencies. */
  trackers: Omit<OsmandRoutesDeps, 'writes'>;
  metrics: GatewayMetrics;
}

export interface Http {
  /** The express app, for tests that read its route table. */
  app: Express;
  /** The server's request listener: the direct routes, then the app. */
  listener: RequestListener;
  /** The live position streams, ended when the gateway stops. */
  streams: Streams;
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
  const writes = writeHandlers(deps.writes);
  const tripBatch = tripBatchHandler(deps.writes);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.use(front);
  // Routes sit on the app itself rather than in nested routers: each router a request crosses costs a
  // pass over its stack. The hot paths come first: the category read, the two writes, the position reads.
  addCategoryRoutes(app, deps.categories);
  addWriteRoutes(app, writes);
  addTripBatchRoute(app, tripBatch);
  // Before the position reads, whose scope check covers every path under /fleet/api/v1/devices.
  addDeviceRoutes(app, { writes: deps.writes, positions: deps.positions, pool: deps.pool });
  addGroupRoutes(app, deps.groups);
  const streams = addStreamRoutes(app, deps.streams);
  addPositionRoutes(app, deps.positions);
  addOsmandRoutes(app, { ...deps.trackers, writes: deps.writes });
  addHealthRoutes(app, deps.health);
  addOperationsRoutes(app, deps.metrics.registry);
  app.use(notFound);
  // One answerer for both paths, so a run of 503s is logged once whichever path answered them.
  const answer = answerError(deps.logger);
  app.use(errorHandler(answer));

  const listener = directListener({
    app,
    routes: { categoryRead: keyedCategoryRead(deps.categories), ...writes, tripBatch, ...checkedPositionReads(deps.positions) },
    front,
    answerError: answer,
  });
  return { app, listener, streams };
}
