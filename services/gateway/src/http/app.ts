// The express application: routes and the middleware that every route shares.
import express, { type Express } from 'express';
import type { Logger } from '@fleet/shared';
import { errorHandler, notFound } from './error-handler';
import { healthRoutes, type HealthDeps } from './health-routes';
import { assignRequestId } from './request-id';
import { writeRoutes, type WriteRoutesDeps } from './write-routes';

export interface AppDeps {
  logger: Logger;
  trustProxy: boolean;
  health: HealthDeps;
  writes: WriteRoutesDeps;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);
  app.use(assignRequestId);
  app.use(healthRoutes(deps.health));
  app.use(writeRoutes(deps.writes));
  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
