// docs/api.md's table of routes, generated from the gateway's route table (routes.ts: each route's
// method, path and access) and its OpenAPI document (each operation's request bodies and answers), so
// that the table cannot drift from what the gateway serves. `npm run docs` writes it; a test holds it.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '@fleet/gateway/http/openapi';
import { openApiPath, routeList, type Access } from '@fleet/gateway/http/routes';
import { withSection, type GeneratedSection } from './docs-section';
import { repoRoot } from './load-driver';

export const API_DOCS = path.join(repoRoot, 'docs', 'api.md');

export const API_ROUTES: GeneratedSection = {
  start: '<!-- routes: written by `npm run docs` from the route table and the OpenAPI document; do not edit by hand -->',
  end: '<!-- end of routes -->',
};

interface Operation {
  requestBody?: { content?: Record<string, unknown> };
  responses?: Record<string, unknown>;
}

function authOf(access: Access, routePath: string): string {
  if (access.kind === 'apiKey') return '`Authorization: <API key>`';
  if (access.kind === 'token') return `\`Authorization: Bearer <JWT>\`, scope \`${access.scope}\``;
  return routePath.includes(':key') ? 'the device key in the path' : 'none';
}

/** The table: one row per route, in the route table's order. */
export function apiTable(): string {
  const paths = (openApiDocument() as { paths: Record<string, Record<string, Operation>> }).paths;
  const rows = routeList().map((route) => {
    const documented = openApiPath(route.path);
    const operation = paths[documented]?.[route.method];
    if (!operation) throw new Error(`${route.method.toUpperCase()} ${documented} has no OpenAPI operation`);
    const bodies = Object.keys(operation.requestBody?.content ?? {});
    const answers = Object.keys(operation.responses ?? {});
    const cells = [
      `\`${route.method.toUpperCase()} ${documented}\``,
      authOf(route.access, route.path),
      bodies.length > 0 ? bodies.map((type) => `\`${type}\``).join(', ') : 'none',
      answers.join(', '),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  return ['| method and path | auth | request body | answers |', '|---|---|---|---|', ...rows].join('\n');
}

/** Rewrites docs/api.md's table from the gateway's routes. */
export function writeApiDocs(): void {
  writeFileSync(API_DOCS, withSection(readFileSync(API_DOCS, 'utf8'), API_ROUTES, apiTable()));
}

if (require.main === module) writeApiDocs();
