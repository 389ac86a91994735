// The express application: routes and the middleware that every route shares.
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from '@fleet/shared';
import { addCategoryRoutes, type CategoryRoutesDeps } from '../categories/category-routes';
import type { GatewayMetrics } from '../metrics';
import { errorHandler, notFound } from './error-handler';
import { addHealthRoutes, type HealthDeps } from './health-routes';
import { observeRequests } from './observe-requests';
import { addOperationsRoutes } from './operations-routes';
import { addPositionRoutes, type PositionRoutesDeps } from './position-routes';
import { assignRequestId } from './request-id';
import { addTripBatchRoute } from './trip-batch-route';
import { addWriteRoutes, type WriteRoutesDeps } from './write-routes';

export interface AppDeps {
  logger: Logger;
  trustProxy: boolean;
  health: HealthDeps;
  writes: WriteRoutesDeps;
  categories: CategoryRoutesDeps;
  positions: PositionRoutesDeps;
  metrics: GatewayMetrics;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  // Every answer, JSON or the docs page, carries the usual security headers: nosniff, a
  // Content-Security-Policy (scripts and styles from this origin only, frame-ancestors 'self'),
  // X-Frame-Options and the rest of helmet's defaults. The policy does not upgrade requests to HTTPS:
  // the gateway is also reached over plain HTTP inside a cluster, where /docs would then fail to load.
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  app.use(assignRequestId);
  app.use(observeRequests(deps.metrics, deps.logger));
  // Routes sit on the app itself rather than in nested routers: each router a request crosses costs a
  // pass over its stack. The hot paths come first: the category read, the two writes, the position reads.
  addCategoryRoutes(app, deps.categories);
  addWriteRoutes(app, deps.writes);
  addTripBatchRoute(app, deps.writes);
  addPositionRoutes(app, deps.positions);
  addHealthRoutes(app, deps.health);
  addOperationsRoutes(app, deps.metrics.registry);
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
