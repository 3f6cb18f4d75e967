import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listAudit } from '../../storage/audit-repository.js';
import { problemResponses } from '../problem.js';

const auditRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/audit',
    {
      preHandler: app.authorize('admin'),
      schema: {
        tags: ['tokens'],
        summary: 'Read the audit log',
        description: 'Every write (publish, tag move, yank, token change), newest first.',
        operationId: 'listAudit',
        querystring: z.object({
          limit: z.coerce.number().int().min(1).max(500).default(100),
          before: z.coerce.number().int().positive().optional().describe('Return entries older than this id'),
        }),
        response: {
          200: z.object({
            items: z.array(
              z.object({
                id: z.number().int(),
                at: z.string(),
                actor: z.string(),
                action: z.string(),
                skill: z.string().nullable(),
                version: z.string().nullable(),
                detail: z.record(z.string(), z.unknown()),
              }),
            ),
          }),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const rows = await listAudit(app.database.db, request.query);
      return { items: rows.map((row) => ({ ...row, at: row.at.toISOString() })) };
    },
  );
};

export default auditRoutes;
