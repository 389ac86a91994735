import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AppError } from '@fleet/shared/errors';
import { createLogger } from '@fleet/shared/logger';
import type { AccessCheck } from './access';
import { directListener } from './direct-routes';
import { answerError } from './error-handler';
import type { Middleware, RouteHandler, RouteHandlers } from './route-handler';
import { routeList } from './routes';
import { sendJson } from './send-json';

/** Each route of the table answers its name and parameter; the express app answers everything else. */
async function serve(front: Middleware[] = [], failing?: RouteHandler, check: AccessCheck = () => undefined) {
  const answering =
    (name: string): RouteHandler =>
    async (_req, res, param) => {
      sendJson(res, 200, { direct: name, param, route: res.locals.route });
    };
  const handlers = Object.fromEntries(routeList().map((route) => [route.name, answering(route.name)])) as RouteHandlers;
  if (failing) handlers.createTripLocation = failing;
  const app = express();
  app.use((req, res) => {
    res.json({ express: `${req.method} ${req.url}` });
  });
  const listener = directListener({ app, handlers, check, front, answerError: answerError(createLogger('test', 'silent')) });
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    send: async (method: string, path: string) => {
      const response = await fetch(`${base}${path}`, { method });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('directListener', () => {
  test('takes each route in its canonical form, with its pattern and its parameter', async () => {
    const server = await serve();
    try {
      expect((await server.send('POST', '/fleet/api/v1/trip-location')).body).toEqual({
        direct: 'createTripLocation',
        param: '',
        route: '/fleet/api/v1/trip-location',
      });
      expect((await server.send('POST', '/fleet/api/v1/trip-location/batch?x=1')).body.direct).toBe('createTripLocationBatch');
      expect((await server.send('POST', '/fleet/api/v1/vehicle-group')).body.direct).toBe('createVehicleGroup');
      expect((await server.send('GET', '/order/api/web/v1/product-category/abc-1')).body).toEqual({
        direct: 'getProductCategory',
        param: 'abc-1',
        route: '/order/api/web/v1/product-category/:id',
      });
      expect((await server.send('GET', '/fleet/api/v1/devices/359/last-location')).body).toEqual({
        direct: 'getLastLocation',
        param: '359',
        route: '/fleet/api/v1/devices/:imei/last-location',
      });
      expect((await server.send('GET', '/fleet/api/v1/devices/359/trip-locations?limit=5')).body).toEqual({
        direct: 'listTripLocations',
        param: '359',
        route: '/fleet/api/v1/devices/:imei/trip-locations',
      });
    } finally {
      await server.close();
    }
  });

  test('leaves every other form of a request to express', async () => {
    const server = await serve();
    try {
      for (const [method, path] of [
        ['GET', '/fleet/api/v1/trip-location'],
        ['POST', '/fleet/api/v1/trip-location/'],
        ['POST', '/Fleet/api/v1/trip-location'],
        ['PUT', '/fleet/api/v1/vehicle-group'],
        ['GET', '/order/api/web/v1/product-category/'],
        ['GET', '/order/api/web/v1/product-category/a%2Fb'],
        ['GET', '/order/api/web/v1/product-category/a/b'],
        ['GET', '/fleet/api/v1/devices//last-location'],
        ['GET', '/fleet/api/v1/devices/a/b/last-location'],
        ['GET', '/fleet/api/v1/devices/%33%35/trip-locations'],
        ['POST', '/fleet/api/v1/devices/359/last-location'],
        ['GET', '/healthz'],
      ] as const) {
        const answered = await server.send(method, path);
        expect({ path, body: answered.body }).toEqual({ path, body: { express: `${method} ${path}` } });
      }
    } finally {
      await server.close();
    }
  });

  test("runs each route's access check from the table before its handler", async () => {
    const seen: string[] = [];
    const check: AccessCheck = (access) => {
      seen.push(access.kind === 'token' ? (access.scope ?? 'token') : access.kind);
      if (access.kind === 'apiKey') throw new AppError({ kind: 'apiKeyRequired' });
      return undefined;
    };
    const server = await serve([], undefined, check);
    try {
      const refused = await server.send('GET', '/order/api/web/v1/product-category/abc-1');
      expect(refused).toEqual({ status: 401, body: expect.objectContaining({ code: 'E-A1/1-01' }) });
      expect((await server.send('POST', '/fleet/api/v1/trip-location/batch')).body.direct).toBe('createTripLocationBatch');
      expect((await server.send('GET', '/fleet/api/v1/devices/359/last-location')).body.direct).toBe('getLastLocation');
      expect(seen).toEqual(['apiKey', 'positions:write', 'positions:read']);
    } finally {
      await server.close();
    }
  });

  test('answers an error of the handler or of a front step as the app would, without stopping', async () => {
    const refusing: RouteHandler = () => Promise.reject(new AppError({ kind: 'tokenRequired' }));
    const refused = await serve([], refusing);
    try {
      const answered = await refused.send('POST', '/fleet/api/v1/trip-location');
      expect(answered.status).toBe(401);
      expect(answered.body.code).toBe('E-G1/1-01');
    } finally {
      await refused.close();
    }

    const throwing: Middleware = () => {
      throw new Error('a front step failed');
    };
    const broken = await serve([throwing]);
    try {
      const first = await broken.send('GET', '/fleet/api/v1/devices/359/last-location');
      expect(first).toEqual({ status: 500, body: { code: 'E-S1/1-00', message: 'Internal server error' } });
      expect((await broken.send('GET', '/fleet/api/v1/devices/359/last-location')).status).toBe(500);
    } finally {
      await broken.close();
    }
  });
});
