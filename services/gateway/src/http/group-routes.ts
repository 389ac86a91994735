// Vehicle groups read back: GET /fleet/api/v1/vehicle-group/{id} and GET /fleet/api/v1/vehicle-groups,
// with a token (scope groups:read when JWT_REQUIRED_SCOPES=true).
import type { TokenVerifier } from '../auth/token-verifier';
import { single } from '../query-parameters';
import type { GroupReader } from '../vehicle-groups/read-vehicle-groups';
import { queryOf, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';

export interface GroupRoutesDeps {
  tokens: TokenVerifier;
  requiredScopes: boolean;
  reader: GroupReader;
}

export function groupHandlers(deps: GroupRoutesDeps): Pick<RouteHandlers, 'getVehicleGroup' | 'listVehicleGroups'> {
  return {
    async getVehicleGroup(_req, res, id) {
      sendJson(res, 200, await deps.reader.group(id));
    },
    async listVehicleGroups(req, res) {
      const query = queryOf(req);
      sendJson(res, 200, await deps.reader.page({ limit: single(query, 'limit'), cursor: single(query, 'cursor') }));
    },
  };
}
