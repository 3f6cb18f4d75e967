import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopePath } from '../../domain/scope.js';
import type { Registry } from '../../services/registry.js';
import {
  checkedQuery,
  DEFAULT_TOOL_LIMIT,
  MAX_QUERY_LENGTH,
  MAX_TOOL_LIMIT,
} from '../../services/skill-search.js';
import { searchResponseSchema, skillsCliSearchResponseSchema } from '../../wire/index.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { withoutNul } from '../schemas.js';

/**
 * GET /search: the REST face of the search_skills tool, so an agent loop over plain HTTP runs a
 * search_skills call with one GET (examples/registry-tools.ts) and gets what MCP's search_skills gives.
 */
const searchRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const { reads } = registry;
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);

  app.get(
    '/search',
    {
      preHandler: readable,
      schema: {
        tags: ['agents'],
        summary: 'Find skills for a task (what the search_skills tool answers)',
        description: `The skills that best fit a task described in plain words (a whole request, any language, typos tolerated), best first, each with its name, description, current version and \`why\` it matched: exactly what the \`search_skills\` tool of GET /tools and MCP answers, so a \`search_skills {query, limit}\` call is run as \`GET /search?q=<query>&limit=<limit>\`. Every name is one load_skill (GET /skills/{name}/content) loads. Skills with \`disable-model-invocation: true\` are never returned. Ranked as GET /skills?q=. An empty query, or one over ${MAX_QUERY_LENGTH} characters, is a 400.`,
        ...mounted(mount, 'searchSkills'),
        ...(mount === 'root' ? {} : { params: mountParams(mount) }),
        querystring: z.object({
          // Optional in the schema so the read check runs first and a missing q gets the service's detail.
          q: withoutNul(z.string().max(MAX_QUERY_LENGTH))
            .optional()
            .describe(
              "Needed: the task in plain words, e.g. 'turn these CSV files into a slide deck'; missing or blank is a 400",
            ),
          limit: z.coerce
            .number()
            .int()
            .min(1)
            .max(MAX_TOOL_LIMIT)
            .default(DEFAULT_TOOL_LIMIT)
            .describe(`Most results (default ${DEFAULT_TOOL_LIMIT}, at most ${MAX_TOOL_LIMIT})`),
          tag: withoutNul(z.string().max(64))
            .optional()
            .describe('Dist-tag whose versions are searched (default latest)'),
        }),
        response: {
          200: searchResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request, reply) => {
      const { q, limit, tag } = request.query;
      return sendAnswer(
        request,
        reply,
        await reads.searchAnswer(request.scope, { query: q ?? '', limit, tag }),
      );
    },
  );

  app.get(
    '/api/search',
    {
      preHandler: readable,
      schema: {
        tags: ['agents'],
        summary: 'Search in the shape the public `skills` CLI reads',
        description:
          'What `SKILLS_API_URL=<this registry, namespace or view URL> npx skills find <words>` asks for: the same ranking as GET /search, as `{skills: [{id, name, source, description}]}`. Each `source` installs that skill from where it was searched: `npx skills add <source>` (the CLI prints `<source>@<name>`, which installs the same skill).',
        ...mounted(mount, 'searchSkillsForSkillsCli'),
        ...(mount === 'root' ? {} : { params: mountParams(mount) }),
        querystring: z.object({
          q: withoutNul(z.string().max(MAX_QUERY_LENGTH))
            .optional()
            .describe('Needed: the words to search for; missing or blank is a 400'),
          limit: z.coerce.number().int().min(1).max(MAX_TOOL_LIMIT).default(DEFAULT_TOOL_LIMIT),
        }),
        response: {
          200: skillsCliSearchResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request) => {
      const query = checkedQuery(request.query.q ?? '');
      const results = await registry.search.searchSkills(request.scope, {
        query,
        limit: request.query.limit,
      });
      const base = `${publicBaseUrl(request)}${scopePath(request.scope)}`;
      return {
        skills: results.map((result) => ({
          id: result.name,
          name: result.name,
          source: `${base}/skills/${encodeURIComponent(result.name)}`,
          description: result.description,
        })),
      };
    },
  );
};

export default searchRoutes;
