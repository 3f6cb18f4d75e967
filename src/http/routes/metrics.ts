import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { clientErrors } from '../problem.js';

/** GET /metrics: the registry of the metrics plugin (plugins/metrics.ts) in the Prometheus text format. */
const metricsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { registry } = app.metrics;
  app.get(
    '/metrics',
    {
      logLevel: 'warn',
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics',
        description:
          'Prometheus text exposition format. Public like /livez, also when SKILLREG_READ_AUTH=true: keep it on an internal network. Request durations by route pattern and status code, layer-2 loads per skill, publishes by outcome, conditional GETs answered 304 vs 200, database pool state, and Node.js process metrics.',
        operationId: 'getMetrics',
        response: {
          200: {
            description: 'Metrics in the Prometheus text format',
            content: { [registry.contentType]: { schema: z.string() } },
          },
          ...clientErrors,
        },
      },
    },
    async (_request, reply) => {
      const text = await registry.metrics();
      return reply.type(registry.contentType).header('cache-control', 'no-store').send(text);
    },
  );
};

export default metricsRoutes;
