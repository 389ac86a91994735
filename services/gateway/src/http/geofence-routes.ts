// Geofences: POST and GET /fleet/api/v1/geofences, GET and DELETE /fleet/api/v1/geofences/{id}, with a
// token (scopes geofences:write and geofences:read when JWT_REQUIRED_SCOPES=true). A token bound to one
// device reads them but may not change them: a geofence applies to every device.
import { AppError } from '@fleet/shared/errors';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf } from '../auth/require-scope';
import type { Geofences } from '../geofences/geofences';
import { single } from '../query-parameters';
import { bodyOf, queryOf, type Answer, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';
import { acceptBody, admitSubject, JSON_TYPE, jsonParser, type WriteRoutesDeps } from './write-routes';

export interface GeofenceRoutesDeps {
  writes: WriteRoutesDeps;
  geofences: Geofences;
}

export function geofenceHandlers(
  deps: GeofenceRoutesDeps,
): Pick<RouteHandlers, 'createGeofence' | 'listGeofences' | 'getGeofence' | 'deleteGeofence'> {
  const parsers = { [JSON_TYPE]: jsonParser(deps.writes.bodyLimit) };
  const refuseDeviceToken = (res: Answer) => {
    if (deviceOf(verifiedTokenOf(res), deps.writes.deviceClaim) !== undefined) {
      throw new AppError({ kind: 'deviceForbidden', detail: 'a token bound to one device may not change the geofences of every device' });
    }
  };
  return {
    async createGeofence(req, res) {
      refuseDeviceToken(res);
      await acceptBody(deps.writes, parsers, req, res);
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.geofences.create(bodyOf(req)));
    },
    async listGeofences(req, res) {
      const query = queryOf(req);
      sendJson(res, 200, await deps.geofences.page({ limit: single(query, 'limit'), cursor: single(query, 'cursor') }));
    },
    async getGeofence(_req, res, id) {
      sendJson(res, 200, await deps.geofences.get(id));
    },
    async deleteGeofence(_req, res, id) {
      refuseDeviceToken(res);
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.geofences.delete(id));
    },
  };
}
