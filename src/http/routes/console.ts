import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { buildConsoleAssets, type ConsoleAssets } from '../../console/assets.js';
import { NotFoundError } from '../../domain/app-errors.js';
import { escapeXmlAttribute } from '../../render/xml.js';
import { REVALIDATE, setCacheControl } from '../caching.js';
import { publicBaseUrl } from '../public-url.js';

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

/**
 * The one page. Its meta tags tell the app what it would otherwise learn from a failing request:
 * whether reads need a token, and the address agents and hosts should be given (SKILLREG_PUBLIC_URL
 * behind a proxy).
 */
function pageHtml(options: { readAuth: boolean; publicUrl: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="skillreg-read-auth" content="${options.readAuth}">
<meta name="skillreg-public-url" content="${escapeXmlAttribute(options.publicUrl)}">
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
}

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

  const pageRoute = {
    schema: {
      tags: ['console'],
      summary: 'The web console',
      description:
        'A single page: the console routes in the browser (catalogue, skills, namespaces and views, tokens, audit, quarantine, usage). Sign in with a registry token; it is kept for the browser session only.',
      hide: true,
    },
  };
  const sendPage = async (request: FastifyRequest, reply: FastifyReply) =>
    secured(reply)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(pageHtml({ readAuth: app.config.readAuth, publicUrl: publicBaseUrl(request) }));
  app.get('/ui', pageRoute, sendPage);
  app.get('/ui/*', pageRoute, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.startsWith('assets/')) {
      const name = rest.slice('assets/'.length);
      if (name !== 'app.js' && name !== 'app.css') {
        throw new NotFoundError(
          `the console has no asset '${name}': it serves /ui/assets/app.js and app.css`,
        );
      }
      const file = (await built())[name];
      // The same bytes for everyone: shared caches may keep them, asking again each time.
      setCacheControl(secured(reply).header('etag', file.etag), REVALIDATE);
      if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.type(file.contentType).send(file.bytes);
    }
    return sendPage(request, reply);
  });
};

export default consoleRoutes;
