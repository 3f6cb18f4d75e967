import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Registry } from '../../services/registry.js';
import {
  namespaceDeletedSchema,
  namespaceDigestsSchema,
  namespacesResponseSchema,
} from '../../wire/index.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { namespaceParam, requestNamespace } from '../schemas.js';

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

  app.get(
    '/namespaces/:namespace/digests',
    {
      preHandler: app.authorize('read', { namespace: requestNamespace }),
      schema: {
        tags: ['namespaces'],
        summary: 'Digests of every skill of a namespace',
        description:
          "Every skill of the namespace with the digests of its versions that are not yanked, in one answer: `skillreg sync` compares its folders with it and publishes only what changed, so an unchanged repository costs one request and no write quota. `default` is the unprefixed API's namespace.",
        operationId: 'getNamespaceDigests',
        params: namespaceParam,
        response: { 200: namespaceDigestsSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const scope = await registry.scopes.namespace(request.params.namespace);
      return sendAnswer(request, reply, await registry.namespaces.digestsAnswer(scope));
    },
  );

  app.delete(
    '/namespaces/:namespace',
    {
      preHandler: app.authorize('admin'),
      schema: {
        tags: ['namespaces'],
        summary: 'Delete a namespace',
        description:
          'Deletes the namespace with every skill and version in it, for good (admin, with a token not limited to namespaces). `default` cannot be deleted (400); a namespace that is a layer of a view is refused with a 409 naming the views. Audited; seen on the very next request on every replica.',
        operationId: 'deleteNamespace',
        params: namespaceParam,
        response: {
          200: namespaceDeletedSchema,
          ...problemResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request) => ({
      namespace: request.params.namespace,
      deleted: await registry.namespaces.delete(request.params.namespace, request.principal!.actor),
    }),
  );
};

export default namespacesRoutes;
