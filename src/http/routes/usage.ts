import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import { scopeUsageSchema, skillUsageSchema } from '../../wire/index.js';
import { problemResponses } from '../problem.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { nameParam } from '../schemas.js';

const daysQuery = z.coerce
  .number()
  .int()
  .min(1)
  .max(3_650)
  .default(30)
  .describe('Window in days, ending today (UTC); at most SKILLREG_USAGE_DAYS');

/** Usage per skill and per scope, counted by the read path on every face (src/storage/usage-recorder.ts). */
const usageRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const { usage } = registry;
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);
  const where = mountParams(mount);

  app.get(
    '/skills/:name/usage',
    {
      preHandler: readable,
      schema: {
        tags: ['usage'],
        summary: "A skill's usage per day",
        description:
          'Loads, bundled-file reads and bundle downloads of the skill per UTC day over the window (every face counts: HTTP, MCP, vendor APIs), and per version. Counts are batched; a read first writes what this replica still holds.',
        ...mounted(mount, 'getSkillUsage'),
        params: where.extend(nameParam.shape),
        querystring: z.object({ days: daysQuery }),
        response: {
          200: skillUsageSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      const answer = await usage.skillUsage(request.scope, request.params.name, request.query.days);
      return reply.header('cache-control', 'no-store').send(answer);
    },
  );

  app.get(
    '/usage',
    {
      preHandler: readable,
      schema: {
        tags: ['usage'],
        summary: 'Top skills and skills never loaded',
        description:
          'The current skills of this scope (in a view, the layer each name resolves to) ranked by loads over the window, and those no agent loaded in it: the skills installed everywhere and used nowhere.',
        ...mounted(mount, 'getUsage'),
        ...(mount === 'root' ? {} : { params: where }),
        querystring: z.object({
          days: daysQuery,
          limit: z.coerce.number().int().min(1).max(500).default(20).describe('Top skills listed'),
        }),
        response: {
          200: scopeUsageSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request, reply) => {
      const answer = await usage.scopeUsage(request.scope, request.query.days, request.query.limit);
      return reply.header('cache-control', 'no-store').send(answer);
    },
  );
};

export default usageRoutes;
