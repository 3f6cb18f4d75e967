import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Registry } from '../../services/registry.js';
import { livenessSchema, readinessSchema } from '../../wire/index.js';
import { clientErrors, problemResponses, sendProblem } from '../problem.js';

const healthRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  const { database } = registry;
  app.get(
    '/livez',
    {
      logLevel: 'warn',
      schema: {
        tags: ['operations'],
        summary: 'Liveness',
        description: 'The process is up and serving HTTP.',
        operationId: 'livez',
        response: { 200: livenessSchema, ...clientErrors },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        tags: ['operations'],
        summary: 'Readiness',
        description:
          'The database answers and what the service keeps in memory is read (at start the search index and the agent catalogue are read once: until then searches and prompts would wait for them); load balancers should send traffic only while this is 200.',
        operationId: 'readyz',
        response: {
          200: readinessSchema,
          ...clientErrors,
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      try {
        await database.ping();
        if (registry.warming) {
          return sendProblem(
            reply,
            503,
            'Service Unavailable',
            'the search index and the agent catalogue are being read (once, at start); try again in a few seconds',
          );
        }
        return { status: 'ok' as const, database: database.kind };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return sendProblem(reply, 503, 'Service Unavailable', 'the database does not answer');
      }
    },
  );
};

export default healthRoutes;
