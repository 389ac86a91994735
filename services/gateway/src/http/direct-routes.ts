// The hot routes, answered without express: a device's post, a fleet app's position read and the
// category read are nearly all of the traffic, and express 5's routing and request decoration cost more
// CPU per request than Node's HTTP server itself (an express hello-world spends about 95 µs a request on
// the bench host, the same answer from Node alone about 15 µs, security headers included).
//
// Only a route's canonical form is taken here: its exact path, its one method, nothing to decode. Any
// other request (HEAD, another method, a trailing slash or other letter case, a percent-encoded
// parameter, an unknown path) goes to the express app, which serves the same handlers behind the same
// front steps, so a request is answered alike whichever way it came.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { CATEGORY_BASE_PATH, CATEGORY_ROUTE } from './category-routes';
import { DEVICES_PATH, LAST_LOCATION_PATH, TRIP_LOCATIONS_PATH } from './position-routes';
import { pathOf, type Answer, type Middleware, type RouteHandler } from './route-handler';
import { TRIP_LOCATION_BATCH_PATH } from './trip-batch-route';
import { TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from './write-routes';

export interface DirectRoutes {
  /** The category read, its API key check included. */
  categoryRead: RouteHandler;
  tripLocation: RouteHandler;
  tripBatch: RouteHandler;
  vehicleGroup: RouteHandler;
  /** The position reads, their token and scope check included. */
  lastLocation: RouteHandler;
  history: RouteHandler;
}

interface Found {
  handler: RouteHandler;
  /** The express pattern of the route, the label its metrics carry either way. */
  route: string;
  param: string;
}

const CATEGORY_PREFIX = `${CATEGORY_BASE_PATH}/`;
const DEVICES_PREFIX = `${DEVICES_PATH}/`;
const LAST_LOCATION_TAIL = '/last-location';
const TRIP_LOCATIONS_TAIL = '/trip-locations';

/** One path segment that needs no decoding, or undefined. */
function plainSegment(segment: string): string | undefined {
  return segment !== '' && !segment.includes('/') && !segment.includes('%') ? segment : undefined;
}

function findRoute(routes: DirectRoutes, method: string | undefined, path: string): Found | undefined {
  if (method === 'POST') {
    if (path === TRIP_LOCATION_PATH) return { handler: routes.tripLocation, route: TRIP_LOCATION_PATH, param: '' };
    if (path === TRIP_LOCATION_BATCH_PATH) return { handler: routes.tripBatch, route: TRIP_LOCATION_BATCH_PATH, param: '' };
    if (path === VEHICLE_GROUP_PATH) return { handler: routes.vehicleGroup, route: VEHICLE_GROUP_PATH, param: '' };
    return undefined;
  }
  if (method !== 'GET') return undefined;
  if (path.startsWith(CATEGORY_PREFIX)) {
    const id = plainSegment(path.slice(CATEGORY_PREFIX.length));
    return id === undefined ? undefined : { handler: routes.categoryRead, route: CATEGORY_ROUTE, param: id };
  }
  if (path.startsWith(DEVICES_PREFIX)) {
    const rest = path.slice(DEVICES_PREFIX.length);
    if (rest.endsWith(LAST_LOCATION_TAIL)) {
      const imei = plainSegment(rest.slice(0, -LAST_LOCATION_TAIL.length));
      return imei === undefined ? undefined : { handler: routes.lastLocation, route: LAST_LOCATION_PATH, param: imei };
    }
    if (rest.endsWith(TRIP_LOCATIONS_TAIL)) {
      const imei = plainSegment(rest.slice(0, -TRIP_LOCATIONS_TAIL.length));
      return imei === undefined ? undefined : { handler: routes.history, route: TRIP_LOCATIONS_PATH, param: imei };
    }
  }
  return undefined;
}

export interface DirectListenerOptions {
  app: Express;
  routes: DirectRoutes;
  /** The steps the express app also runs first, in its order. */
  front: readonly Middleware[];
  /** Answers an error as the express app's error handler does. */
  answerError: (error: unknown, req: IncomingMessage, res: Answer) => void;
}

/** The server's request listener: the direct routes, and the express app for everything else. */
export function directListener({ app, routes, front, answerError }: DirectListenerOptions): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    // A fragment (which clients do not send) is left to express's URL parsing.
    const found = req.url?.includes('#') ? undefined : findRoute(routes, req.method, pathOf(req));
    if (!found) {
      void app(req, res);
      return;
    }
    const answer = Object.assign(res, { locals: { route: found.route } as Record<string, unknown> });
    // With the answer begun, the connection is closed as express's final handler does: the client sees it cut short.
    const fail = (error: unknown) => (answer.headersSent ? req.socket.destroy() : answerError(error, req, answer));
    const step = (index: number): void => {
      if (index === front.length) {
        found.handler(req, answer, found.param).catch(fail);
        return;
      }
      // A step that throws is answered as express answers a middleware that throws, not left to crash the process.
      try {
        front[index]!(req, answer, (error) => (error ? fail(error) : step(index + 1)));
      } catch (error) {
        fail(error);
      }
    };
    step(0);
  };
}
