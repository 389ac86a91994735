// The device registry's routes: registering a tracker, setting a device's speed limit, removing it and
// giving it a new key (scope devices:write), the token checked before a body is read as on the write
// routes; and the list of devices with their status (scope positions:read), which a token bound to one
// device may not read.
import { AppError } from '@fleet/shared/errors';
import { deviceOf } from '../auth/device-claim';
import { verifiedTokenOf } from '../auth/require-scope';
import type { DeviceManagement } from '../devices/manage-device';
import { registerDevice, type DeviceEnrolment } from '../devices/register-device';
import type { PositionRoutesDeps } from './position-routes';
import { bodyOf, queryOf, type RouteHandlers } from './route-handler';
import { sendJson } from './send-json';
import { acceptBody, admitSubject, JSON_TYPE, jsonParser, type WriteRoutesDeps } from './write-routes';

export interface DeviceRoutesDeps {
  writes: WriteRoutesDeps;
  positions: PositionRoutesDeps;
  enrolment: DeviceEnrolment;
  management: DeviceManagement;
}

export function deviceHandlers(
  deps: DeviceRoutesDeps,
): Pick<RouteHandlers, 'registerDevice' | 'listDevices' | 'updateDevice' | 'removeDevice' | 'rotateDeviceKey'> {
  const parsers = { [JSON_TYPE]: jsonParser(deps.writes.bodyLimit) };
  return {
    async registerDevice(req, res) {
      const device = deviceOf(verifiedTokenOf(res), deps.positions.deviceClaim);
      await acceptBody(deps.writes, parsers, req, res);
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await registerDevice(bodyOf(req), device, deps.enrolment));
    },
    async updateDevice(req, res, imei) {
      const device = deviceOf(verifiedTokenOf(res), deps.positions.deviceClaim);
      await acceptBody(deps.writes, parsers, req, res);
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.management.update(imei, bodyOf(req), device));
    },
    async removeDevice(_req, res, imei) {
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.management.remove(imei, deviceOf(verifiedTokenOf(res), deps.positions.deviceClaim)));
    },
    async rotateDeviceKey(_req, res, imei) {
      await admitSubject(deps.writes, res);
      sendJson(res, 200, await deps.management.rotateKey(imei, deviceOf(verifiedTokenOf(res), deps.positions.deviceClaim)));
    },
    async listDevices(req, res) {
      if (deviceOf(verifiedTokenOf(res), deps.positions.deviceClaim) !== undefined) {
        throw new AppError({ kind: 'deviceForbidden', detail: 'a token bound to one device may not list the fleet' });
      }
      sendJson(res, 200, await deps.positions.statuses.page(queryOf(req)));
    },
  };
}
