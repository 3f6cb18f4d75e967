import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { buildConsoleAssets, type ConsoleAssets } from '../../console/assets.js';
import { NotFoundError } from '../../errors.js';

/**
 * Every console response carries it: scripts and styles from this origin only (no inline script or
 * style, so injected markup cannot run), requests to this origin only, no frames, no plugins, no
 * form posts elsewhere. Images are this origin's or data: URIs (bundled images shown in the viewer).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skill-registry console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/assets/app.css">
<script type="module" src="/ui/assets/app.js"></script>
</head>
<body>
<noscript>The console needs JavaScript. The API is at <a href="/docs">/docs</a>.</noscript>
<div id="app"></div>
</body>
</html>
`;

function secured(reply: FastifyReply): FastifyReply {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
  return reply;
}

/** The web console at /ui: one page (the app routes in the browser) and its two bundled assets. */
const consoleRoutes: FastifyPluginAsync = async (app) => {
  let assets: Promise<ConsoleAssets> | undefined;
  const built = () => {
    assets ??= buildConsoleAssets().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    return assets;
  };

  const page = {
    schema: {
      tags: ['console'],
      summary: 'The web console',
      description:
        'A single page: the console routes in the browser (catalogue, skills, namespaces and views, tokens, audit, quarantine, usage). Sign in with a registry token; it is kept for the browser session only.',
      hide: true,
    },
  };
  const sendPage = async (_request: unknown, reply: FastifyReply) =>
    secured(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(PAGE);
  app.get('/ui', page, sendPage);
  app.get('/ui/*', page, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.startsWith('assets/')) {
      const name = rest.slice('assets/'.length);
      if (name !== 'app.js' && name !== 'app.css') {
        throw new NotFoundError(
          `the console has no asset '${name}': it serves /ui/assets/app.js and app.css`,
        );
      }
      const file = (await built())[name];
      secured(reply).header('etag', file.etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.type(file.contentType).send(file.bytes);
    }
    return sendPage(request, reply);
  });
};

export default consoleRoutes;
