// What operators and integrators read: Prometheus metrics, the OpenAPI document, and the docs page,
// which is Swagger UI served from the swagger-ui-dist package (no CDN, so it works air-gapped).
import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Registry } from 'prom-client';
import { AppError } from '@fleet/shared/errors';
import { openApiDocument } from './openapi';
import type { RouteHandlers } from './route-handler';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
/** The page's files from swagger-ui-dist, by name, with their media types. */
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const DOCS_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Fleet telemetry API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// A file rather than an inline script, so the page works under a Content-Security-Policy without 'unsafe-inline'.
// No validator badge: it would send the document's address to an outside service, which the policy refuses.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;

function sendText(res: ServerResponse, type: string, text: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function operationsHandlers(registry: Registry): Pick<RouteHandlers, 'metrics' | 'openApiDocument' | 'apiDocs' | 'apiDocsAsset'> {
  const documentJson = JSON.stringify(openApiDocument());
  return {
    async metrics(_req, res) {
      sendText(res, registry.contentType, await registry.metrics());
    },
    async openApiDocument(_req, res) {
      sendText(res, 'application/json; charset=utf-8', documentJson);
    },
    async apiDocs(_req, res) {
      sendText(res, 'text/html; charset=utf-8', DOCS_PAGE);
    },
    async apiDocsAsset(_req, res, name) {
      if (name === 'init.js') return sendText(res, 'application/javascript; charset=utf-8', DOCS_INIT);
      const type = ASSETS.get(name);
      if (!type) throw new AppError({ kind: 'routeNotFound' });
      res.statusCode = 200;
      res.setHeader('Content-Type', type);
      res.setHeader('Cache-Control', 'public, max-age=3600');
      await pipeline(createReadStream(path.join(SWAGGER_UI_DIR, name)), res);
    },
  };
}
