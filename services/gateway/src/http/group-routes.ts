// Vehicle groups read back: GET /fleet/api/v1/vehicle-group/{id} and GET /fleet/api/v1/vehicle-groups,
// with a token (scope groups:read when JWT_REQUIRED_SCOPES=true).
import type { Express } from 'express';
import { requireScope, SCOPES } from '../auth/require-scope';
import type { TokenVerifier } from '../auth/token-verifier';
import { single } from '../positions/position-query';
import type { GroupReader } from '../vehicle-groups/read-vehicle-groups';
import { queryOf } from './route-handler';
import { sendJson } from './send-json';
import { VEHICLE_GROUP_PATH } from './write-routes';

export const VEHICLE_GROUP_ITEM_PATH = `${VEHICLE_GROUP_PATH}/:id`;
export const VEHICLE_GROUPS_PATH = '/fleet/api/v1/vehicle-groups';

export interface GroupRoutesDeps {
  tokens: TokenVerifier;
  requiredScopes: boolean;
  reader: GroupReader;
}

export function addGroupRoutes(router: Express, deps: GroupRoutesDeps): void {
  const allowed = requireScope(SCOPES.groupsRead, deps);
  router.get(VEHICLE_GROUP_ITEM_PATH, allowed, async (req, res) => {
    sendJson(res, 200, await deps.reader.group(req.params.id as string));
  });
  router.get(VEHICLE_GROUPS_PATH, allowed, async (req, res) => {
    const query = queryOf(req);
    sendJson(res, 200, await deps.reader.page({ limit: single(query, 'limit'), cursor: single(query, 'cursor') }));
  });
}
