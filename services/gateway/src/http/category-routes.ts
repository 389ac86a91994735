// GET /order/api/web/v1/product-category/:id. The API key is checked on the whole path prefix, before
// express decodes the id, so a request without a key is refused whatever its id, even an undecodable one.
import type { ErrorRequestHandler } from 'express';
import { parseCategoryId, type CategoryReader } from '../categories/get-category';
import type { RouteHandlers } from './route-handler';
import { sendJsonText } from './send-json';

export interface CategoryRoutesDeps {
  reader: CategoryReader;
}

/** Express fails to decode an id like `%zz` before any handler runs; it is answered as any bad id. */
export const undecodableCategoryId: ErrorRequestHandler = (error, req, _res, next) => {
  if (!(error instanceof URIError)) return next(error);
  const raw = req.path.slice(req.path.lastIndexOf('/') + 1);
  parseCategoryId(raw);
  next(error);
};

export function categoryHandlers(deps: CategoryRoutesDeps): Pick<RouteHandlers, 'getProductCategory'> {
  return {
    async getProductCategory(_req, res, id) {
      sendJsonText(res, 200, await deps.reader.read(id));
    },
  };
}
