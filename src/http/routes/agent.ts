import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_PROMPT_BUDGET } from '../../config.js';
import { scopePath } from '../../domain/scope.js';
import type { SkillSelection } from '../../render/prompt.js';
import type { Registry } from '../../services/registry.js';
import { MAX_QUERY_LENGTH, PROMPT_SEARCH_LIMIT } from '../../services/skill-search.js';
import { promptResponseSchema, toolsResponseSchema } from '../../wire/index.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { publicBaseUrl } from '../public-url.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { withoutNul } from '../schemas.js';

/** `name` may repeat (?name=a&name=b) or hold a comma-separated list; skill names never contain commas. */
const namesQuery = z
  .union([withoutNul(z.string().max(4000)), z.array(withoutNul(z.string().max(4000))).max(500)])
  .optional()
  .transform((value) =>
    value === undefined
      ? undefined
      : (Array.isArray(value) ? value : [value])
          .flatMap((entry) => entry.split(','))
          .map((entry) => entry.trim())
          .filter(Boolean),
  )
  .describe('Only these skills; repeat the parameter (name=a&name=b) or separate with commas');

const selectionQuery = z.object({
  name: namesQuery,
  tag: withoutNul(z.string().max(64))
    .optional()
    .describe('Dist-tag whose versions are listed (default latest)'),
  q: withoutNul(z.string().max(MAX_QUERY_LENGTH))
    .optional()
    .describe(
      `Only the best matches of this search (at most ${PROMPT_SEARCH_LIMIT}, best first), ranked as GET /skills?q=`,
    ),
});

function selectionOf(query: { name?: string[]; tag?: string; q?: string }): SkillSelection {
  return { names: query.name, tag: query.tag, q: query.q?.trim() || undefined };
}

/**
 * GET /prompt and GET /tools: what a remote agent needs to use the registry's skills. Renderings are
 * kept in the read cache for the catalogue revision they were made at (plus the loads revision when a
 * budget orders skills by use), so a poll does not render the catalogue again.
 */
const agentRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const { agents } = registry;
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);
  const params = mount === 'root' ? {} : { params: mountParams(mount) };

  app.get(
    '/prompt',
    {
      preHandler: readable,
      schema: {
        tags: ['agents'],
        summary: 'System-prompt fragment listing the skills',
        description:
          'One string to append to a system message: short instructions (skills are not tools; call `load_skill` with the name before following one) and the selected skills in the `<available_skills>` layout (`format=xml`, default), as a Markdown list (`format=markdown`), or as `{prompt, tokens, included, omitted, omittedCount, searchFirst}` (`format=json`). Each skill carries its absolute content URL. Select with `name` (repeatable), `tag` and `q`. `budget=N` keeps the whole fragment within N tokens (o200k_base); without `budget` the registry default applies (`SKILLREG_PROMPT_BUDGET`, 4,000 tokens unless configured), and `budget=0` lists every selected skill however many. When not every selected skill fits, the fragment turns search-first: it lists the most loaded skills that fit (most recorded loads, then most recently loaded, then the shorter entry), names or counts the rest, and tells the model to call `search_skills` with a description of the task when no listed skill fits, then `load_skill` with a name it returns. `mode=search` asks for the search-first instructions even when every skill fits (under the same budget). `format=json` names at most 100 omitted skills and counts them all in `omittedCount`. Skills with `disable-model-invocation: true` are never listed.',
        ...mounted(mount, 'getPrompt'),
        ...params,
        querystring: selectionQuery.extend({
          format: z.enum(['xml', 'markdown', 'json']).default('xml'),
          budget: z.coerce
            .number()
            .int()
            .min(0)
            .max(MAX_PROMPT_BUDGET)
            .optional()
            .describe(
              "Largest size of the whole fragment in tokens (o200k_base); 0 for no limit. Without it, the registry's default (SKILLREG_PROMPT_BUDGET, 4000 unless configured)",
            ),
          mode: z
            .enum(['list', 'search'])
            .default('list')
            .describe(
              'list (default): list the selection, turning search-first only when budget= cannot hold it all; search: always search-first, listing the selection (what fits the budget, if given) and telling the model to call search_skills when no listed skill fits',
            ),
        }),
        response: {
          200: promptResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request, reply) => {
      const { format, budget, mode } = request.query;
      const answer = await agents.prompt(request.scope, {
        selection: selectionOf(request.query),
        format,
        budget,
        mode,
        baseUrl: `${publicBaseUrl(request)}${scopePath(request.scope)}`,
      });
      return sendAnswer(request, reply, answer);
    },
  );

  app.get(
    '/tools',
    {
      preHandler: readable,
      schema: {
        tags: ['agents'],
        summary: 'Tool definitions for loading and finding skills',
        description:
          "`load_skill {name, version?}`, `read_skill_file {name, path}` and `search_skills {query, limit?}`, ready to pass to a model API: `provider=anthropic` (`[{name, description, input_schema}]`, default) or `provider=openai` (Chat Completions `[{type: 'function', function: {name, description, parameters, strict}}]`). Run `search_skills` calls with GET /search, which answers the same results. The `name` of load_skill is an enum of the selected skills (same selection as GET /prompt, without skills that disable model invocation) when there are at most 250 of them. The definitions stay small however large the catalogue: above 250 skills, or always with `mode=search`, the enum is left out and the name's description says it comes from `<available_skills>` or from `search_skills` results; load_skill loads any exact name. A selection that names its skills (`name`, `q`) keeps the model to them, so `search_skills` is left out unless `mode=search` asks for it. `strict=true` (default for openai) makes every property required, optional ones nullable, as OpenAI's strict mode needs.",
        ...mounted(mount, 'getTools'),
        ...params,
        querystring: selectionQuery.extend({
          provider: z.enum(['anthropic', 'openai']).default('anthropic'),
          strict: z
            .enum(['true', 'false'])
            .default('true')
            .transform((value) => value === 'true')
            .describe('openai only: strict-mode schemas (default true)'),
          mode: z
            .enum(['auto', 'search'])
            .default('auto')
            .describe(
              'auto: the name enum when the selection has at most 250 skills; search: search-first, never the enum (the definitions do not grow with the catalogue), search_skills always offered',
            ),
        }),
        response: {
          200: toolsResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request, reply) => {
      const { provider, strict, mode } = request.query;
      const answer = await agents.tools(request.scope, {
        selection: selectionOf(request.query),
        provider,
        strict,
        mode,
      });
      return sendAnswer(request, reply, answer);
    },
  );
};

export default agentRoutes;
