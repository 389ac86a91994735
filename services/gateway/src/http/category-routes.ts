// GET /order/api/web/v1/product-category/:id. The API key is checked on the whole path prefix, before
// express decodes the id, so a request without a key is refused whatever its id, even an undecodable one.
import type { ErrorRequestHandler, Express } from 'express';
import type { ApiKeyAuth } from '../api-keys/api-key-auth';
import { parseCategoryId, type CategoryReader } from '../categories/get-category';
import type { RouteHandler } from './route-handler';
import { sendJsonText } from './send-json';

export const CATEGORY_BASE_PATH = '/order/api/web/v1/product-category';
export const CATEGORY_ROUTE = `${CATEGORY_BASE_PATH}/:id`;

export interface CategoryRoutesDeps {
  apiKeys: ApiKeyAuth;
  reader: CategoryReader;
}

/** Express fails to decode an id like `%zz` before any handler runs; it is answered as any bad id. */
const undecodableId: ErrorRequestHandler = (error, req, _res, next) => {
  if (!(error instanceof URIError)) return next(error);
  const raw = req.path.slice(req.path.lastIndexOf('/') + 1);
  parseCategoryId(raw);
  next(error);
};

/** The read behind its key check, for the direct routes, which have no prefix middleware. */
export function keyedCategoryRead(deps: CategoryRoutesDeps): RouteHandler {
  const read = categoryRead(deps);
  return async (req, res, id) => {
    deps.apiKeys.requireKey(req.headers.authorization);
    await read(req, res, id);
  };
}

function categoryRead(deps: CategoryRoutesDeps): RouteHandler {
  return async (_req, res, id) => {
    sendJsonText(res, 200, await deps.reader.read(id));
  };
}

export function addCategoryRoutes(router: Express, deps: CategoryRoutesDeps): void {
  const read = categoryRead(deps);
  router.use(CATEGORY_BASE_PATH, deps.apiKeys.middleware);
  router.get(CATEGORY_ROUTE, (req, res) => read(req, res, req.params.id as string));
  router.use(CATEGORY_BASE_PATH, undecodableId);
}
