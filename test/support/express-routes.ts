// The routes an express app serves, read from its router stack, so that a test can hold what the app
// really serves against the OpenAPI document. Express has no stable public API for this (router 2.3
// adds listRoutes(), which express 5 does not guarantee), so the walk reads the layers' `route` and
// nested `stack`, which every router 2.x has.
import type { Express } from 'express';

export interface ServedRoute {
  /** Lower case, as express registers it. */
  method: string;
  /** The express pattern, e.g. /order/api/web/v1/product-category/:id */
  path: string;
}

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: unknown;
}

function walk(stack: Layer[], prefix: string, into: ServedRoute[]): void {
  for (const layer of stack) {
    if (layer.route && typeof layer.route.path === 'string') {
      for (const method of Object.keys(layer.route.methods)) {
        if (method !== '_all') into.push({ method, path: prefix + layer.route.path });
      }
    } else if (Array.isArray(layer.handle?.stack)) {
      const mountedAt = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      walk(layer.handle.stack, prefix + mountedAt, into);
    }
  }
}

export function listRoutes(app: Express): ServedRoute[] {
  const routes: ServedRoute[] = [];
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '', routes);
  return routes;
}
