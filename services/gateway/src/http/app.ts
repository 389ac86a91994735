// The express application: routes and the middleware that every route shares.
import express, { type Express } from 'express';
import type { Logger } from '@fleet/shared';
import { categoryRoutes, type CategoryRoutesDeps } from '../categories/category-routes';
import type { GatewayMetrics } from '../metrics';
import { errorHandler, notFound } from './error-handler';
import { healthRoutes, type HealthDeps } from './health-routes';
import { observeRequests } from './observe-requests';
import { operationsRoutes } from './operations-routes';
import { assignRequestId } from './request-id';
import { writeRoutes, type WriteRoutesDeps } from './write-routes';

export interface AppDeps {
  logger: Logger;
  trustProxy: boolean;
  health: HealthDeps;
  writes: WriteRoutesDeps;
  categories: CategoryRoutesDeps;
  metrics: GatewayMetrics;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.use(assignRequestId);
  app.use(observeRequests(deps.metrics, deps.logger));
  // First after the request id: the category read is the hot path, so it crosses no other router.
  app.use(categoryRoutes(deps.categories));
  app.use(healthRoutes(deps.health));
  app.use(writeRoutes(deps.writes));
  app.use(operationsRoutes(deps.metrics.registry));
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
