import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import { AUDIT_ACTIONS } from '../../storage/audit-repository.js';
import { problemResponses } from '../problem.js';
import { withoutNul } from '../schemas.js';

const auditEntrySchema = z.object({
  id: z.number().int().describe('Increases with every entry'),
  at: z.string().describe('When the write committed (ISO 8601)'),
  actor: z.string().describe('Who: `token:<name>` or `admin-token` (SKILLREG_ADMIN_TOKEN)'),
  action: z.string().describe(`What: ${AUDIT_ACTIONS.join(', ')}`),
  namespace: z
    .string()
    .nullable()
    .describe('The namespace written to (skill writes, namespace and view changes); null for token changes'),
  skill: z.string().nullable().describe('The skill changed; null for token changes'),
  version: z.string().nullable().describe('The version published, tagged or yanked'),
  detail: z
    .record(z.string(), z.unknown())
    .describe('What changed (digest, tag and previous version, token id...)'),
});

const auditPageSchema = z.object({
  items: z.array(auditEntrySchema),
  nextCursor: z
    .string()
    .nullable()
    .describe('Pass as cursor= for the next (older) page; null on the last page'),
});

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true })
    .optional()
    .describe(`${what} (ISO 8601 date-time with Z or an offset, e.g. 2025-01-31T00:00:00Z)`);

const auditRoutes: FastifyPluginAsyncZod<{ registry: Registry }> = async (app, { registry }) => {
  const { audit } = registry.repositories;
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
      const page = await audit.list({
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
