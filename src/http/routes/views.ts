import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import { MAX_VIEW_LAYERS, viewBodySchema, viewSchema, viewsResponseSchema } from '../../wire/index.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { viewName } from '../read-mounts.js';

const viewParams = z.object({ view: viewName.describe('View name (skill-name rules)') });

/**
 * Views: named, ordered overlays of namespaces (admin writes them; anyone who may read lists them).
 * What a view serves is under /views/{view}/ (the read routes mounted there, app.ts).
 */
const viewsRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  const { scopes } = registry;
  const anyReader = app.authorize('read', { anyNamespace: true });
  const admin = app.authorize('admin');

  app.get(
    '/views',
    {
      preHandler: anyReader,
      schema: {
        tags: ['namespaces'],
        summary: 'List views',
        description: 'Every view with its layers (lowest precedence first), by name.',
        operationId: 'listViews',
        response: { 200: viewsResponseSchema, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => sendAnswer(request, reply, await scopes.listAnswer()),
  );

  app.get(
    '/views/:view',
    {
      preHandler: anyReader,
      schema: {
        tags: ['namespaces'],
        summary: 'One view',
        description:
          "The view's layers and description. What it serves is under `/views/{view}/`: `skills`, `skills/{name}` and below, `prompt`, `tools`, `search`, `mcp` and `.well-known/agent-skills/index.json`, as at the root.",
        operationId: 'getView',
        params: viewParams,
        response: { 200: viewSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => sendAnswer(request, reply, await scopes.viewAnswer(request.params.view)),
  );

  app.put(
    '/views/:view',
    {
      preHandler: admin,
      schema: {
        tags: ['namespaces'],
        summary: 'Create or replace a view',
        description: `Layers are namespaces, lowest precedence first (as agent hosts load bundled < user < project): for each skill name the last layer holding a servable version for the tag asked for (default latest) wins, and a skill wholly yanked in a higher layer falls back to the next lower one. Every layer must be a namespace that exists (one something was published into); at most ${MAX_VIEW_LAYERS}. The edit is visible on the very next request on every replica, and audited.`,
        operationId: 'putView',
        params: viewParams,
        body: viewBodySchema,
        response: {
          200: viewSchema.describe('The view was replaced'),
          201: viewSchema.describe('The view was created'),
          ...problemResponses(400, 401, 403, 422),
        },
      },
    },
    async (request, reply) => {
      const { view, created } = await scopes.putView(
        request.params.view,
        request.body,
        request.principal!.actor,
      );
      return reply.code(created ? 201 : 200).send({
        name: view.name,
        layers: view.layers,
        description: view.description,
        createdAt: view.createdAt.toISOString(),
        updatedAt: view.updatedAt.toISOString(),
      });
    },
  );

  app.delete(
    '/views/:view',
    {
      preHandler: admin,
      schema: {
        tags: ['namespaces'],
        summary: 'Delete a view',
        description: 'The namespaces it overlaid are untouched.',
        operationId: 'deleteView',
        params: viewParams,
        response: { 204: z.null().describe('Deleted'), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await scopes.deleteView(request.params.view, request.principal!.actor);
      return reply.code(204).send(null);
    },
  );
};

export default viewsRoutes;
