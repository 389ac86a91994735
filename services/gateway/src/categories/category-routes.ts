// GET /order/api/web/v1/product-category/:id. The API key is checked on the whole path prefix, before
// express decodes the id, so a request without a key is refused whatever its id, even an undecodable one.
import { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import type { ApiKeyAuth } from '../api-keys/api-key-auth';
import { parseCategoryId, type CategoryReader } from './get-category';

export const CATEGORY_BASE_PATH = '/order/api/web/v1/product-category';

export interface CategoryRoutesDeps {
  apiKeys: ApiKeyAuth;
  reader: CategoryReader;
}

function sendJson(res: Response, body: Buffer | string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** Express fails to decode an id like `%zz` before any handler runs; it is answered as any bad id. */
const undecodableId: ErrorRequestHandler = (error, req, _res, next) => {
  if (!(error instanceof URIError)) return next(error);
  const raw = req.path.slice(req.path.lastIndexOf('/') + 1);
  parseCategoryId(raw);
  next(error);
};

export function categoryRoutes(deps: CategoryRoutesDeps): Router {
  const router = Router();
  const read: RequestHandler = async (req, res) => {
    sendJson(res, await deps.reader.read(req.params.id));
  };
  router.use(CATEGORY_BASE_PATH, deps.apiKeys.middleware);
  router.get(`${CATEGORY_BASE_PATH}/:id`, read);
  router.use(CATEGORY_BASE_PATH, undecodableId);
  return router;
}
