// Every route the gateway serves, declared once: its method, its path, who may call it, and whether the
// direct routes serve its canonical requests. Everything else is derived from this table: the express
// registration with each path's 405 (register-routes.ts), the direct routes' dispatch (direct-routes.ts),
// the metrics' route labels (route-matcher.ts), and the OpenAPI document (openapi.ts), whose operation
// for each route is keyed by the route's name, its operationId. A route's handler is bound to the same
// name (RouteHandlers), so a route added here does not compile until it has a handler and a description.
import { SCOPES, type Scope } from '../auth/require-scope';

/**
 * Who may call a route: an API key, a bearer token granting a scope, or anyone (a device key in the path
 * is the handler's to check). A token without a scope is a guard's: any valid token, each route below it
 * then checking its own scope.
 */
export type Access = { kind: 'apiKey' } | { kind: 'token'; scope?: Scope } | { kind: 'public' };

const API_KEY: Access = { kind: 'apiKey' };
const PUBLIC: Access = { kind: 'public' };
const token = (scope: Scope): Access => ({ kind: 'token', scope });

export interface RouteSpec {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** The express pattern; at most one `:parameter`, which the handler is given decoded. */
  path: string;
  access: Access;
  /** Served without express for its canonical requests: the hot paths. */
  direct?: true;
  /**
   * The query parameters a read takes: any other (a misspelt `IMEI`, an `imei[]`) is refused with 400
   * E-V1/1-06 rather than ignored, so that a filter never silently widens. Unset: not checked.
   */
  query?: readonly string[];
}

const PAGE = ['limit', 'cursor'] as const;

export const CATEGORY_BASE_PATH = '/order/api/web/v1/product-category';
export const FLEET_PATH = '/fleet/api/v1';
export const TRIP_LOCATION_PATH = `${FLEET_PATH}/trip-location`;
export const TRIP_LOCATION_BATCH_PATH = `${TRIP_LOCATION_PATH}/batch`;
export const VEHICLE_GROUP_PATH = `${FLEET_PATH}/vehicle-group`;
export const DEVICES_PATH = `${FLEET_PATH}/devices`;
export const GEOFENCES_PATH = `${FLEET_PATH}/geofences`;
export const EVENTS_PATH = `${FLEET_PATH}/events`;
export const WEBHOOKS_PATH = `${FLEET_PATH}/webhooks`;

/**
 * In express's order: a path's routes are matched in this order, each path answers 405 to other methods
 * after its last route, and the paths under a guarded prefix come after the routes of the prefix itself.
 */
export const ROUTES = {
  getProductCategory: { method: 'get', path: `${CATEGORY_BASE_PATH}/:id`, access: API_KEY, direct: true },
  createTripLocation: { method: 'post', path: TRIP_LOCATION_PATH, access: token(SCOPES.positionsWrite), direct: true },
  createTripLocationBatch: { method: 'post', path: TRIP_LOCATION_BATCH_PATH, access: token(SCOPES.positionsWrite), direct: true },
  createVehicleGroup: { method: 'post', path: VEHICLE_GROUP_PATH, access: token(SCOPES.groupsWrite), direct: true },
  registerDevice: { method: 'post', path: DEVICES_PATH, access: token(SCOPES.devicesWrite) },
  listDevices: { method: 'get', path: DEVICES_PATH, access: token(SCOPES.positionsRead), query: ['status', ...PAGE] },
  getVehicleGroup: { method: 'get', path: `${VEHICLE_GROUP_PATH}/:id`, access: token(SCOPES.groupsRead), query: [] },
  listVehicleGroups: { method: 'get', path: `${FLEET_PATH}/vehicle-groups`, access: token(SCOPES.groupsRead), query: PAGE },
  createGeofence: { method: 'post', path: GEOFENCES_PATH, access: token(SCOPES.geofencesWrite) },
  listGeofences: { method: 'get', path: GEOFENCES_PATH, access: token(SCOPES.geofencesRead), query: PAGE },
  getGeofence: { method: 'get', path: `${GEOFENCES_PATH}/:id`, access: token(SCOPES.geofencesRead), query: [] },
  deleteGeofence: { method: 'delete', path: `${GEOFENCES_PATH}/:id`, access: token(SCOPES.geofencesWrite) },
  listEvents: { method: 'get', path: EVENTS_PATH, access: token(SCOPES.eventsRead), query: ['imei', 'type', 'from', 'to', ...PAGE] },
  streamEvents: { method: 'get', path: `${EVENTS_PATH}/stream`, access: token(SCOPES.eventsRead), query: ['imei', 'type'] },
  createWebhook: { method: 'post', path: WEBHOOKS_PATH, access: token(SCOPES.webhooksWrite) },
  listWebhooks: { method: 'get', path: WEBHOOKS_PATH, access: token(SCOPES.webhooksWrite), query: PAGE },
  getWebhook: { method: 'get', path: `${WEBHOOKS_PATH}/:id`, access: token(SCOPES.webhooksWrite), query: [] },
  deleteWebhook: { method: 'delete', path: `${WEBHOOKS_PATH}/:id`, access: token(SCOPES.webhooksWrite) },
  streamPositions: { method: 'get', path: `${FLEET_PATH}/positions/stream`, access: token(SCOPES.positionsRead), query: ['imei'] },
  getLastLocation: {
    method: 'get',
    path: `${DEVICES_PATH}/:imei/last-location`,
    access: token(SCOPES.positionsRead),
    direct: true,
    query: [],
  },
  listTripLocations: {
    method: 'get',
    path: `${DEVICES_PATH}/:imei/trip-locations`,
    access: token(SCOPES.positionsRead),
    direct: true,
    query: ['from', 'to', 'includeFiltered', ...PAGE],
  },
  rotateDeviceKey: { method: 'post', path: `${DEVICES_PATH}/:imei/key`, access: token(SCOPES.devicesWrite) },
  getDeviceStatus: { method: 'get', path: `${DEVICES_PATH}/:imei`, access: token(SCOPES.positionsRead), query: [] },
  updateDevice: { method: 'patch', path: `${DEVICES_PATH}/:imei`, access: token(SCOPES.devicesWrite) },
  removeDevice: { method: 'delete', path: `${DEVICES_PATH}/:imei`, access: token(SCOPES.devicesWrite) },
  osmandGet: { method: 'get', path: '/osmand/:key', access: PUBLIC },
  osmandPost: { method: 'post', path: '/osmand/:key', access: PUBLIC },
  liveness: { method: 'get', path: '/healthz', access: PUBLIC },
  readiness: { method: 'get', path: '/readyz', access: PUBLIC },
  metrics: { method: 'get', path: '/metrics', access: PUBLIC },
  openApiDocument: { method: 'get', path: '/openapi.json', access: PUBLIC },
  apiDocs: { method: 'get', path: '/docs', access: PUBLIC },
  apiDocsAsset: { method: 'get', path: '/docs/:asset', access: PUBLIC },
} as const satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof ROUTES;

/**
 * Path prefixes whose access is checked before any of their routes is matched, so that a request
 * without it is refused whatever its path, even one whose parameter cannot be decoded (which express
 * fails on before any route runs). Each guard comes right before the first route below its prefix.
 */
export const GUARDED_PREFIXES: ReadonlyArray<{ prefix: string; access: Access }> = [
  { prefix: CATEGORY_BASE_PATH, access: API_KEY },
  // Any valid token: the routes below it read (positions:read) or manage (devices:write) a device.
  { prefix: DEVICES_PATH, access: { kind: 'token' } },
];

/** The routes in the table's order, each with its name. */
export function routeList(): Array<RouteSpec & { name: RouteName }> {
  return (Object.keys(ROUTES) as RouteName[]).map((name) => ({ name, ...ROUTES[name] }));
}

/** The OpenAPI form of an express pattern: `/devices/:imei` is `/devices/{imei}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}
