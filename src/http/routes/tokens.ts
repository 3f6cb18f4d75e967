import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TokenIdentity } from '../../services/administration.js';
import type { Registry } from '../../services/registry.js';
import {
  createdTokenSchema,
  createTokenBodySchema,
  tokenListSchema,
  whoAmISchema,
} from '../../wire/index.js';
import { problemResponses } from '../problem.js';

function serialize<T extends { createdAt: Date; expiresAt: Date | null; lastUsedAt: Date | null }>(token: T) {
  return {
    ...token,
    createdAt: token.createdAt.toISOString(),
    expiresAt: token.expiresAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
  };
}

const tokensRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  const { tokens } = registry;
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
        body: createTokenBodySchema,
        response: {
          201: createdTokenSchema,
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const created = await tokens.create({ ...request.body, actor: request.principal!.actor });
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
        response: { 200: tokenListSchema, ...problemResponses(401, 403) },
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
      let identity: TokenIdentity;
      try {
        identity = await tokens.identify(request.principal!);
      } catch (error) {
        reply.header('www-authenticate', 'Bearer realm="skill-registry"');
        throw error;
      }
      const { principal } = identity;
      if (identity.kind === 'bootstrap') {
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
      const { token } = identity;
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
