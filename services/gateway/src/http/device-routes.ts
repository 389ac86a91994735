// The device registry's routes: registering a tracker (scope devices:write), checked as the write routes
// check it, the token before the body is read; and the list of devices with their status (scope
// positions:read), which a token bound to one device may not read.
import express, { type Express, type RequestHandler } from 'express';
import type { Pool } from 'pg';
import { AppError } from '@fleet/shared';
import { deviceOf } from '../auth/device-claim';
import { requireScope, SCOPES, verifiedTokenOf } from '../auth/require-scope';
import { registerDevice } from '../devices/register-device';
import { sendError } from './error-handler';
import { DEVICES_PATH, type PositionRoutesDeps } from './position-routes';
import { bodyOf, queryOf } from './route-handler';
import { sendJson } from './send-json';
import { acceptBody, JSON_TYPE, requireUtf8, type WriteRoutesDeps } from './write-routes';

export interface DeviceRoutesDeps {
  writes: WriteRoutesDeps;
  positions: PositionRoutesDeps;
  pool: Pool;
}

const getOrPost: RequestHandler = (req, res) => {
  res.setHeader('Allow', 'GET, HEAD, POST');
  sendError(res, new AppError({ kind: 'methodNotAllowed', detail: `${req.method} is not served here; use GET or POST` }));
};

export function addDeviceRoutes(router: Express, deps: DeviceRoutesDeps): void {
  const parsers = { [JSON_TYPE]: express.json({ limit: deps.writes.bodyLimit, type: JSON_TYPE, verify: requireUtf8 }) };
  router.post(DEVICES_PATH, async (req, res) => {
    await acceptBody(deps.writes, SCOPES.devicesWrite, parsers, req, res);
    sendJson(res, 200, await registerDevice(bodyOf(req), deps.pool));
  });
  router.get(DEVICES_PATH, requireScope(SCOPES.positionsRead, deps.positions), async (req, res) => {
    if (deviceOf(verifiedTokenOf(res), deps.positions.deviceClaim) !== undefined) {
      throw new AppError({ kind: 'deviceForbidden', detail: 'a token bound to one device may not list the fleet' });
    }
    sendJson(res, 200, await deps.positions.statuses.page(queryOf(req)));
  });
  router.route(DEVICES_PATH).all(getOrPost);
}
