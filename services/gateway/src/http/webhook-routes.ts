// Webhooks: POST and GET /fleet/api/v1/webhooks, GET and DELETE /fleet/api/v1/webhooks/{id}, with a token
// (scope webhooks:write when JWT_REQUIRED_SCOPES=true). A token bound to one device may not touch them: a
// webhook receives every device's events.
import { AppError } from '@fleet/shared/errors';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf } from '../auth/require-scope';
import { single } from '../query-parameters';
import type { Webhooks } from '../webhooks/webhooks';
import { bodyOf, queryOf, type Answer, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';
import { acceptBody, admitSubject, JSON_TYPE, jsonParser, type WriteRoutesDeps } from './write-routes';

export interface WebhookRoutesDeps {
  writes: WriteRoutesDeps;
  webhooks: Webhooks;
}

export function webhookHandlers(
  deps: WebhookRoutesDeps,
): Pick<RouteHandlers, 'createWebhook' | 'listWebhooks' | 'getWebhook' | 'deleteWebhook'> {
  const parsers = { [JSON_TYPE]: jsonParser(deps.writes.bodyLimit) };
  const refuseDeviceToken = (res: Answer) => {
    if (deviceOf(verifiedTokenOf(res), deps.writes.deviceClaim) !== undefined) {
      throw new AppError({
        kind: 'deviceForbidden',
        detail: "a token bound to one device may not manage webhooks, which receive every device's events",
      });
    }
  };
  return {
    async createWebhook(req, res) {
      refuseDeviceToken(res);
      await acceptBody(deps.writes, parsers, req, res);
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.webhooks.create(bodyOf(req)));
    },
    async listWebhooks(req, res) {
      refuseDeviceToken(res);
      const query = queryOf(req);
      sendJson(res, 200, await deps.webhooks.page({ limit: single(query, 'limit'), cursor: single(query, 'cursor') }));
    },
    async getWebhook(_req, res, id) {
      refuseDeviceToken(res);
      sendJson(res, 200, await deps.webhooks.get(id));
    },
    async deleteWebhook(_req, res, id) {
      refuseDeviceToken(res);
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.webhooks.delete(id));
    },
  };
}
