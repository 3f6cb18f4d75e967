import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../../domain/audit-actions.js';
import type { Registry } from '../../services/registry.js';
import { auditPageSchema } from '../../wire/index.js';
import { problemResponses } from '../problem.js';
import { withoutNul } from '../schemas.js';

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true })
    .optional()
    .describe(`${what} (ISO 8601 date-time with Z or an offset, e.g. 2025-01-31T00:00:00Z)`);

const auditRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  app.get(
    '/audit',
    {
      preHandler: app.authorize('admin'),
      schema: {
        tags: ['tokens'],
        summary: 'Read the audit log',
        description:
          "Every write (publish, tag move, yank, token change), newest first, with who did it and what changed. Filters combine (all must match). Page with `cursor=` set to the previous page's `nextCursor`; `before=<id>` (entries older than that id) still works.",
        operationId: 'listAudit',
        querystring: z.object({
          limit: z.coerce
            .number()
            .int()
            .min(1)
            .max(500)
            .default(50)
            .describe('Entries per page (50, max 500)'),
          cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
          before: z.coerce
            .number()
            .int()
            .positive()
            .optional()
            .describe('Entries older than this id (older paging; prefer cursor)'),
          actor: withoutNul(z.string().min(1).max(200))
            .optional()
            .describe('Exact actor, e.g. token:ci-main or admin-token'),
          action: z.enum(AUDIT_ACTIONS).optional().describe('One action'),
          namespace: withoutNul(z.string().min(1).max(64)).optional().describe('Exact namespace'),
          skill: withoutNul(z.string().min(1).max(64)).optional().describe('Exact skill name'),
          since: instant('Entries at or after this instant'),
          until: instant('Entries before this instant'),
        }),
        response: {
          200: auditPageSchema,
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { since, until, ...query } = request.query;
      const page = await registry.adminLists.auditPage({
        ...query,
        since: since === undefined ? undefined : new Date(since),
        until: until === undefined ? undefined : new Date(until),
      });
      return {
        items: page.items.map((row) => ({ ...row, at: row.at.toISOString() })),
        nextCursor: page.nextCursor,
      };
    },
  );
};

export default auditRoutes;
