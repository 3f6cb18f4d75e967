import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { packageVersion } from '../../process/package-version.js';
import { escapeXmlAttribute, escapeXmlText } from '../../render/xml.js';
import { homeResponseSchema, type homeSchema } from '../../wire/index.js';
import { clientErrors } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';

type Home = z.infer<typeof homeSchema>;

function homeOf(base: string, readAuth: boolean): Home {
  return {
    name: 'skill-registry',
    version: packageVersion(),
    readAuth,
    links: {
      console: `${base}/ui`,
      docs: `${base}/docs`,
      openapi: `${base}/openapi.json`,
      catalogue: `${base}/skills`,
      prompt: `${base}/prompt`,
      tools: `${base}/tools?provider=anthropic`,
      search: `${base}/search?q=`,
      mcp: `${base}/mcp`,
      index: `${base}/.well-known/agent-skills/index.json`,
      cli: `${base}/cli`,
      health: `${base}/readyz`,
    },
  };
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}' +
  'h1{font-size:1.6rem;margin-bottom:.25rem}p.lead{margin-top:0;color:#4b5563}' +
  'a.primary{display:inline-block;padding:.5rem 1rem;border-radius:.4rem;background:#1d4ed8;color:#fff;text-decoration:none;margin-right:.5rem}' +
  'a.secondary{display:inline-block;padding:.5rem 1rem;border-radius:.4rem;border:1px solid #1d4ed8;color:#1d4ed8;text-decoration:none}' +
  'table{border-collapse:collapse;width:100%;margin-top:1rem}td{padding:.35rem .5rem;border-top:1px solid #e5e7eb;vertical-align:top}' +
  'code{font-size:.9em;overflow-wrap:anywhere}h2{font-size:1.15rem;margin-top:2rem}';
/** The page's one inline stylesheet, allowed by its hash: the page needs no other request. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;
const HOME_CSP = `default-src 'none'; style-src ${STYLE_HASH}; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

function homeHtml(home: Home): string {
  const row = (label: string, url: string, what: string) =>
    `<tr><td>${escapeXmlText(label)}</td><td><a href="${escapeXmlAttribute(url)}"><code>${escapeXmlText(url)}</code></a><br>${escapeXmlText(what)}</td></tr>`;
  const { links } = home;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skill-registry</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>skill-registry ${escapeXmlText(home.version)}</h1>
<p class="lead">A registry of Agent Skills: CI publishes skill folders, agents and coding hosts read them.</p>
<p><a class="primary" href="${escapeXmlAttribute(links.console)}">Open the console</a><a class="secondary" href="${escapeXmlAttribute(links.docs)}">API docs</a></p>
${home.readAuth ? '<p>Reads need a token with scope <code>read</code>: sign in to the console with one, or send <code>Authorization: Bearer &lt;token&gt;</code>.</p>' : ''}
<h2>For agents</h2>
<table>
${row('Catalogue', links.catalogue, 'layer 1: every skill with its description')}
${row('Prompt fragment', links.prompt, 'append to a system prompt; the model then calls load_skill')}
${row('Tool definitions', links.tools, 'load_skill, read_skill_file and search_skills for a model API (provider=openai too)')}
${row('Search', links.search, 'describe a task, get the skills that fit')}
${row('MCP', links.mcp, 'an MCP server over Streamable HTTP: claude mcp add --transport http skills <this URL>')}
${row('Discovery index', links.index, 'npx skills add <registry URL> installs from it')}
</table>
<h2>For people and CI</h2>
<table>
${row('CLI', links.cli, 'the skillreg command, served by this registry')}
${row('OpenAPI', links.openapi, 'every route, machine-readable')}
${row('Health', links.health, 'readiness for load balancers')}
</table>
</main>
</body>
</html>
`;
}

/** A program that asks for JSON and not for HTML (browsers always name text/html). */
function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && /\bjson\b/.test(accept) && !accept.includes('text/html');
}

/**
 * GET /: a person opening the registry's address gets a page that leads to the console, the docs and
 * the agent endpoints; a program asking for JSON gets the same links.
 */
const homeRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/',
    {
      schema: {
        tags: ['operations'],
        summary: 'Start page',
        description:
          'An HTML page linking the console, the API docs and the agent endpoints; with `Accept: application/json`, the same links as JSON.',
        operationId: 'getHome',
        response: { 200: homeResponseSchema, ...clientErrors },
      },
    },
    async (request, reply) => {
      const home = homeOf(publicBaseUrl(request), app.config.readAuth);
      reply.header('cache-control', 'no-cache').header('vary', 'accept');
      if (wantsJson(request.headers.accept)) return home;
      return reply
        .header('content-security-policy', HOME_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .send(homeHtml(home));
    },
  );
};

export default homeRoutes;
