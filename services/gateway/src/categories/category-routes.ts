// GET /order/api/web/v1/product-category/:id. The API key is checked on the whole path prefix, before
// express decodes the id, so a request without a key is refused whatever its id, even an undecodable one.
import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import type { ApiKeyAuth } from '../api-keys/api-key-auth';
import { sendJsonText } from '../http/send-json';
import { parseCategoryId, type CategoryReader } from './get-category';

export const CATEGORY_BASE_PATH = '/order/api/web/v1/product-category';

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

export function addCategoryRoutes(router: Express, deps: CategoryRoutesDeps): void {
  const read: RequestHandler = async (req, res) => {
    sendJsonText(res, 200, await deps.reader.read(req.params.id));
  };
  router.use(CATEGORY_BASE_PATH, deps.apiKeys.middleware);
  router.get(`${CATEGORY_BASE_PATH}/:id`, read);
  router.use(CATEGORY_BASE_PATH, undecodableId);
}
