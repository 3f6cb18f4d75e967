import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { openApiDocumentSchema } from '../../wire/index.js';
import { clientErrors } from '../problem.js';

const docsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/openapi.json',
    {
      schema: {
        tags: ['operations'],
        summary: 'OpenAPI 3.1 document',
        description: 'Generated from the route schemas; browse it at /docs.',
        operationId: 'getOpenApi',
        response: { 200: openApiDocumentSchema, ...clientErrors },
      },
    },
    async () => app.swagger() as unknown as Record<string, unknown>,
  );
};

export default docsRoutes;
