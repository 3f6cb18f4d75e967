import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createMcpServer } from '../../mcp/mcp-server.js';
import { clientKey } from '../../requests/client-key.js';
import type { Registry } from '../../services/registry.js';
import { discardRestOfBody } from '../oversized.js';
import { problemResponses, sendProblem } from '../problem.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';

/** Largest JSON-RPC message accepted (the SDK's own default). */
const MCP_BODY_LIMIT = 4 * 1024 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** A JSON-RPC error answered before the MCP transport is involved (the SDK answers the same way). */
function sendJsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The body as JSON when it is sent as JSON; undefined marks unparseable JSON. */
function parseBody(request: FastifyRequest): { ok: true; body: unknown } | { ok: false } {
  const raw = request.body as string | undefined;
  if (!JSON_TYPE.test(request.headers['content-type'] ?? '')) return { ok: true, body: raw ?? '' };
  try {
    return { ok: true, body: JSON.parse(raw ?? '') };
  } catch {
    return { ok: false };
  }
}

/**
 * MCP over Streamable HTTP, stateless: every POST gets its own server and transport, so any replica
 * answers any request and nothing is cached between requests. Server-initiated streams (GET) and
 * sessions (DELETE) do not exist in stateless mode: both answer 405, as the transport spec allows.
 */
const mcpRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);
  const params = mount === 'root' ? {} : { params: mountParams(mount) };

  // Bodies are parsed in the handler, so bad JSON is a JSON-RPC parse error rather than a problem
  // document, and a wrong content type is the transport's JSON-RPC 415. Scoped to this plugin.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MCP_BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );
  app.setErrorHandler(async (error: { code?: string }, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      await discardRestOfBody(request.raw);
      reply.header('connection', 'close');
      return sendJsonRpcError(
        reply,
        413,
        -32000,
        `Payload Too Large: a JSON-RPC message may be at most ${MCP_BODY_LIMIT} bytes`,
      );
    }
    throw error; // every other error is the app's problem+json, from the parent handler
  });

  app.post(
    '/mcp',
    {
      preHandler: readable,
      bodyLimit: MCP_BODY_LIMIT,
      schema: {
        tags: ['skills'],
        summary: 'Model Context Protocol endpoint (Streamable HTTP)',
        description: [
          'MCP over Streamable HTTP (stateless, JSON responses). Point an MCP client at this URL.',
          'Tools: `list_skills {q?, tag?, cursor?}` (the catalogue, a page at a time), `search_skills {query, limit?}` (the skills that fit a task, ranked, with why each matched: what GET /search answers), `load_skill {name, version?}` (the SKILL.md body with a header naming the version and bundled files), `read_skill_file {name, path, version?}` (one bundled file: text, image or base64 resource).',
          'Resources: `skill://{name}/SKILL.md` (listed for every current skill, paginated with cursors) and `skill://{name}/{+path}` (any bundled file of the latest version).',
          'The request must accept both `application/json` and `text/event-stream` and carry `Content-Type: application/json`; after `initialize`, send `MCP-Protocol-Version`.',
          'Protocol errors (unparseable JSON, an invalid JSON-RPC message, a wrong Accept or Content-Type) are JSON-RPC error objects (`application/json`, HTTP 400/406/413/415), not problem documents; unknown skills or files are tool results with `isError: true`, or error -32002 for resources.',
          'Reads need a token with scope `read` when SKILLREG_READ_AUTH=true.',
        ].join('\n\n'),
        ...mounted(mount, 'mcp'),
        ...params,
        body: z
          .any()
          .describe('A JSON-RPC 2.0 request, notification or response, or a batch of them (MCP messages)'),
        response: {
          200: z.any().describe('The JSON-RPC response(s) (application/json)'),
          202: z.any().describe('Only notifications or responses were sent: accepted, no body'),
          ...problemResponses(...mountProblems(mount, 401, 403)),
        },
      },
    },
    async (request, reply) => {
      const parsed = parseBody(request);
      if (!parsed.ok) return sendJsonRpcError(reply, 400, -32700, 'Parse error: Invalid JSON');

      const server = createMcpServer({
        reads: registry.reads,
        search: registry.search,
        scope: request.scope,
        log: request.log,
        client: clientKey(request.ip, request.headers.authorization),
      });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      reply.hijack();
      // Headers set through Fastify (x-request-id) are not written once the reply is hijacked.
      for (const [header, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(header, value);
      }
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, parsed.body);
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          reply.raw.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32603, message: `Internal error; quote request id ${request.id}` },
              id: null,
            }),
          );
        } else if (!reply.raw.writableEnded) {
          reply.raw.end();
        }
      }
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary:
          method === 'GET'
            ? 'MCP server-initiated stream (not offered)'
            : 'MCP session termination (not offered)',
        description:
          'This MCP endpoint is stateless: it keeps no sessions and sends no server-initiated messages, so GET and DELETE answer 405 as the Streamable HTTP transport allows. POST JSON-RPC messages to /mcp.',
        ...mounted(mount, method === 'GET' ? 'mcpStream' : 'mcpEndSession'),
        ...params,
        response: problemResponses(...mountProblems(mount, 401, 403, 405)),
      },
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        return sendProblem(
          reply,
          405,
          'Method Not Allowed',
          `this MCP endpoint is stateless: it has no ${method === 'GET' ? 'server-initiated stream' : 'sessions to end'}; POST JSON-RPC messages to /mcp`,
        );
      },
    });
  }
};

export default mcpRoutes;
