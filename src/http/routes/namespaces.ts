import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { namespacesResponseSchema } from '../../services/documents.js';
import type { Registry } from '../../services/registry.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';

/** GET /namespaces. Everything inside one is under /namespaces/{namespace}/ (mounted in app.ts). */
const namespacesRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  app.get(
    '/namespaces',
    {
      // Which namespaces exist is no secret of any one of them: any reader may list them.
      preHandler: app.authorize('read', { anyNamespace: true }),
      schema: {
        tags: ['namespaces'],
        summary: 'List namespaces',
        description:
          'Every namespace with its count of current skills, by name. `default` always exists and is the unprefixed API; a namespace is created by its first publish (`POST /skills?namespace=NS`).',
        operationId: 'listNamespaces',
        response: { 200: namespacesResponseSchema, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => sendAnswer(request, reply, await registry.namespaces.listAnswer()),
  );
};

export default namespacesRoutes;
