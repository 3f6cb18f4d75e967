import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import { NEVER_LOADED_LIMIT } from '../../services/usage.js';
import { problemResponses } from '../problem.js';
import { nameParam } from '../schemas.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../scope.js';

const counts = {
  loads: z
    .number()
    .int()
    .describe('Layer-2 loads: bodies over HTTP, SKILL.md over MCP, load_skill, vendor APIs'),
  files: z.number().int().describe('Reads of bundled files other than SKILL.md'),
  downloads: z.number().int().describe('Bundle downloads (the discovery index links them too)'),
};

const skillUsageSchema = z
  .object({
    name: z.string(),
    namespace: z.string().describe('The namespace the skill resolves to in the scope read'),
    from: z.string().describe('First day of the window (UTC, YYYY-MM-DD)'),
    to: z.string().describe('Last day of the window: today (UTC)'),
    totals: z.object(counts),
    days: z
      .array(z.object({ date: z.string(), ...counts }))
      .describe('Every day of the window, oldest first, zeros included'),
    versions: z.array(z.object({ version: z.string(), ...counts })).describe('Versions used in the window'),
  })
  .describe('Usage of one skill per day');

const usageEntrySchema = z.object({
  name: z.string(),
  namespace: z.string(),
  version: z.string().describe('The current (latest) version'),
  ...counts,
  lastLoadedAt: z.string().nullable().describe('The last load ever recorded, inside the window or not'),
});

const scopeUsageSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    days: z.number().int(),
    top: z.array(usageEntrySchema).describe('The most loaded current skills, then the most read'),
    used: z.number().int().describe('How many current skills were used at all in the window'),
    neverLoaded: z
      .array(usageEntrySchema)
      .describe(`Current skills no agent loaded in the window, by name (at most ${NEVER_LOADED_LIMIT})`),
    neverLoadedCount: z.number().int(),
  })
  .describe('Usage of a scope: top skills and those never loaded');

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
