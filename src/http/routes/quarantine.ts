import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scanSchema } from '../../services/documents.js';
import type { Registry } from '../../services/registry.js';
import { problemResponses } from '../problem.js';

const quarantinedSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  version: z.string(),
  digest: z.string(),
  publishedBy: z.string(),
  createdAt: z.string(),
  state: z.enum(['held', 'rejected']),
  scan: scanSchema.nullable(),
});

/** GET /quarantine: versions the security scan blocked, for an admin to review. */
const quarantineRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  app.get(
    '/quarantine',
    {
      preHandler: app.authorize('admin'),
      schema: {
        tags: ['tokens'],
        summary: 'Versions in quarantine',
        description:
          'Versions the security scan blocked at publish: stored for review, never served or listed anywhere else, and no tag may point at them. `state=held` (default) lists those awaiting review; `state=rejected` those an admin rejected. Review one with `POST /skills/{name}/versions/{version}/review`.',
        operationId: 'listQuarantine',
        querystring: z.object({
          state: z.enum(['held', 'rejected']).default('held'),
          limit: z.coerce.number().int().min(1).max(500).default(100),
        }),
        response: {
          200: z.object({ items: z.array(quarantinedSchema) }),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const rows = await registry.repositories.skills.quarantined(request.query.state, request.query.limit);
      return {
        items: rows.map((row) => ({
          ...row,
          state: row.state as 'held' | 'rejected',
          createdAt: row.createdAt.toISOString(),
          scan: row.scan as z.infer<typeof scanSchema> | null,
        })),
      };
    },
  );
};

export default quarantineRoutes;
