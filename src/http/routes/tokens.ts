import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { namespacePatternProblem } from '../../namespaces.js';
import type { Registry } from '../../services/registry.js';
import { SCOPES } from '../../storage/tokens-repository.js';
import { problemResponses } from '../problem.js';

const tokenSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  namespaces: z
    .array(z.string())
    .nullable()
    .describe('Namespaces the token may act in (exact names or a trailing *); null: every namespace'),
  prefix: z.string().describe('First characters of the secret, to tell tokens apart'),
  createdBy: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});

const whoAmISchema = z.object({
  name: z
    .string()
    .describe("The token's name; 'admin-token' for the bootstrap token of SKILLREG_ADMIN_TOKEN"),
  actor: z.string().describe('How the audit log names what this token does, e.g. token:ci-main'),
  kind: z
    .enum(['token', 'bootstrap'])
    .describe('token: created with POST /tokens; bootstrap: the admin token set in SKILLREG_ADMIN_TOKEN'),
  id: z.string().nullable().describe('The token id (as in GET /tokens); null for the bootstrap token'),
  scopes: z.array(z.enum(SCOPES)),
  namespaces: z
    .array(z.string())
    .nullable()
    .describe('Namespaces the token may act in (exact names or a trailing *); null: every namespace'),
  expiresAt: z.string().nullable().describe('null: never expires'),
});

function serialize<T extends { createdAt: Date; expiresAt: Date | null; lastUsedAt: Date | null }>(token: T) {
  return {
    ...token,
    createdAt: token.createdAt.toISOString(),
    expiresAt: token.expiresAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
  };
}

const tokensRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  const { tokens } = registry.repositories;
  const adminOnly = app.authorize('admin');

  app.post(
    '/tokens',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['tokens'],
        summary: 'Create a token',
        description:
          'Answers the secret once; only its hash is stored. Scopes: read, publish, admin. `namespaces` limits where the token acts.',
        operationId: 'createToken',
        body: z.object({
          name: z.string().trim().min(1).max(100).describe('What the token is for, e.g. ci-main'),
          scopes: z.array(z.enum(SCOPES)).min(1).describe('read, publish and/or admin'),
          namespaces: z
            .array(
              z
                .string()
                .max(65)
                .superRefine((pattern, context) => {
                  const problem = namespacePatternProblem(pattern);
                  if (problem) context.addIssue({ code: 'custom', message: problem });
                }),
            )
            .min(1)
            .max(100)
            .optional()
            .describe(
              'Limit the token to these namespaces: exact names or a prefix ending in *, e.g. ["data", "data-*"]. Writes elsewhere are refused (403), and with SKILLREG_READ_AUTH=true reads too. Omitted: every namespace',
            ),
          expiresInDays: z
            .number()
            .int()
            .min(1)
            .max(3650)
            .optional()
            .describe('Lifetime; no expiry when omitted'),
        }),
        response: {
          201: tokenSummarySchema.extend({ secret: z.string().describe('The bearer token; shown only now') }),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const { name, scopes, namespaces, expiresInDays } = request.body;
      const expiresAt = expiresInDays ? new Date(Date.now() + expiresInDays * 86_400_000) : undefined;
      const created = await tokens.create({
        name,
        scopes: [...new Set(scopes)],
        ...(namespaces ? { namespaces: [...new Set(namespaces)] } : {}),
        expiresAt,
        actor: request.principal!.actor,
      });
      return reply.code(201).send(serialize(created));
    },
  );

  app.get(
    '/tokens',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['tokens'],
        summary: 'List active tokens',
        description: 'Never shows secrets.',
        operationId: 'listTokens',
        response: { 200: z.object({ items: z.array(tokenSummarySchema) }), ...problemResponses(401, 403) },
      },
    },
    async () => ({ items: (await tokens.list()).map(serialize) }),
  );

  app.get(
    '/auth/whoami',
    {
      // Every token grants read; in no one namespace, so a token limited to namespaces answers too.
      preHandler: app.authorize('read', { anyNamespace: true }),
      schema: {
        tags: ['tokens'],
        summary: 'The token presented',
        description:
          'Who the bearer token is: its name, scopes, namespaces and expiry, never its secret. The console checks a token with it before signing in. No token, or one the registry refuses: a 401 problem saying why (counted like any refused credential).',
        operationId: 'whoAmI',
        response: { 200: whoAmISchema, ...problemResponses(401) },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      if (principal.actor === 'anonymous') {
        reply.header('www-authenticate', 'Bearer realm="skill-registry"');
        throw new AppError(
          401,
          'Unauthorized',
          "no token was presented: send 'Authorization: Bearer <token>' to learn which token it is",
          { reason: 'missing' },
        );
      }
      if (!principal.tokenId) {
        return {
          name: principal.actor,
          actor: principal.actor,
          kind: 'bootstrap' as const,
          id: null,
          scopes: principal.scopes,
          namespaces: principal.namespaces ?? null,
          expiresAt: null,
        };
      }
      const token = await tokens.summary(principal.tokenId);
      if (!token) {
        throw new AppError(401, 'Unauthorized', 'the bearer token was revoked; ask an admin for a new one', {
          reason: 'revoked',
        });
      }
      return {
        name: token.name,
        actor: principal.actor,
        kind: 'token' as const,
        id: token.id,
        scopes: token.scopes,
        namespaces: token.namespaces,
        expiresAt: token.expiresAt?.toISOString() ?? null,
      };
    },
  );

  app.delete(
    '/tokens/:id',
    {
      preHandler: adminOnly,
      schema: {
        tags: ['tokens'],
        summary: 'Revoke a token',
        operationId: 'revokeToken',
        params: z.object({ id: z.uuid().describe('Token id from GET /tokens') }),
        response: { 204: z.null().describe('Revoked'), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await tokens.revoke(request.params.id, request.principal!.actor);
      return reply.code(204).send(null);
    },
  );
};

export default tokensRoutes;
