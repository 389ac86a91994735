// The device registry's route: registering a tracker, with a token (scope devices:write), as the write
// routes check it: the token before the body is read.
import express, { type Express } from 'express';
import type { Pool } from 'pg';
import { SCOPES } from '../auth/require-scope';
import { registerDevice } from '../devices/register-device';
import { DEVICES_PATH } from './position-routes';
import { bodyOf } from './route-handler';
import { sendJson } from './send-json';
import { acceptBody, JSON_TYPE, onlyPost, requireUtf8, type WriteRoutesDeps } from './write-routes';

export interface DeviceRoutesDeps {
  writes: WriteRoutesDeps;
  pool: Pool;
}

export function addDeviceRoutes(router: Express, deps: DeviceRoutesDeps): void {
  const parsers = { [JSON_TYPE]: express.json({ limit: deps.writes.bodyLimit, type: JSON_TYPE, verify: requireUtf8 }) };
  router.post(DEVICES_PATH, async (req, res) => {
    await acceptBody(deps.writes, SCOPES.devicesWrite, parsers, req, res);
    sendJson(res, 200, await registerDevice(bodyOf(req), deps.pool));
  });
  router.route(DEVICES_PATH).all(onlyPost);
}
