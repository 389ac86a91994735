// What operators and integrators read: Prometheus metrics, the OpenAPI document, and the docs page,
// which is Swagger UI served from the swagger-ui-dist package (no CDN, so it works air-gapped).
import path from 'node:path';
import type { Express, RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { openApiDocument } from './openapi';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']);

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

export function addOperationsRoutes(router: Express, registry: Registry): void {
  const documentJson = JSON.stringify(openApiDocument());

  router.get('/metrics', async (_req, res) => {
    const text = await registry.metrics();
    res.type(registry.contentType).send(text);
  });
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(documentJson);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  const asset: RequestHandler = (req, res, next) => {
    const name = req.params.asset as string;
    if (name === 'init.js') {
      res.type('application/javascript').send(DOCS_INIT);
      return;
    }
    if (!ASSETS.has(name)) return next();
    res.sendFile(path.join(SWAGGER_UI_DIR, name), { maxAge: '1h' });
  };
  router.get('/docs/:asset', asset);
}
