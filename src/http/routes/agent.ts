import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  buildPrompt,
  type PromptResult,
  type SkillSelection,
  selectAgentSkills,
} from '../../render/prompt.js';
import { anthropicTools, openAiTools } from '../../render/tools.js';
import {
  type CachedBody,
  jsonBody,
  REVALIDATE,
  replyNotModified,
  revisionEtag,
  sendBytes,
  sendJson,
} from '../caching.js';
import { problemResponses } from '../problem.js';
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
  q: withoutNul(z.string().max(200)).optional().describe('Full-text search over names and descriptions'),
});

const omittedSchema = z.object({
  name: z.string(),
  reason: z
    .enum(['budget', 'not-found', 'model-invocation-disabled'])
    .describe(
      'budget: dropped to fit budget= (the fragment names it); not-found: a name= with no current version under the tag; model-invocation-disabled: disable-model-invocation is true',
    ),
});

export const promptJsonSchema = z.object({
  prompt: z.string().describe('The fragment in the xml layout, ready to append to a system message'),
  tokens: z.number().int().describe('Tokens of prompt (o200k_base)'),
  included: z.array(
    z.object({
      name: z.string(),
      version: z.string(),
      location: z.string().describe('Absolute URL of the skill body (layer 2)'),
      tokens: z.object({
        entry: z.number().int().describe('Tokens this skill adds to the fragment'),
        body: z.number().int().describe('Tokens of its body, once loaded'),
      }),
    }),
  ),
  omitted: z.array(omittedSchema),
});

/** Entries encoded, and characters converted to UTF-8, per turn of the event loop. */
const JSON_SLICE = 2_000;
const TEXT_SLICE = 1 << 20;

/**
 * The bytes jsonBody(promptJsonSchema, value) gives, built a slice at a time with a turn of the event
 * loop in between: at 100,000 skills the lists and the 30 MB prompt take about a second at once.
 * `parts` are the prompt in consecutive parts (PromptResult.parts).
 */
export async function promptJsonBody(
  value: z.infer<typeof promptJsonSchema>,
  parts: readonly string[] = [value.prompt],
): Promise<CachedBody> {
  const { tokens } = z.encode(promptJsonSchema.pick({ prompt: true, tokens: true }), {
    prompt: value.prompt,
    tokens: value.tokens,
  });
  const texts = ['{"prompt":"'];
  let converted = 0;
  for (const slice of slices(parts)) {
    texts.push(JSON.stringify(slice).slice(1, -1));
    converted += slice.length;
    if (converted >= TEXT_SLICE) {
      converted = 0;
      await yieldToEventLoop();
    }
  }
  texts.push(`","tokens":${JSON.stringify(tokens)},"included":`);
  texts.push(...(await encodeInSlices(promptJsonSchema.shape.included, value.included)));
  texts.push(',"omitted":');
  texts.push(...(await encodeInSlices(promptJsonSchema.shape.omitted, value.omitted)));
  texts.push('}');
  return bytesInSlices(texts);
}

/** A text answer's bytes, as bufferBody gives them, converted a part at a time. */
export async function textBody(parts: readonly string[]): Promise<CachedBody> {
  return bytesInSlices(parts);
}

/**
 * JSON.stringify(z.encode(schema, items)) for an array schema, in consecutive parts, JSON_SLICE items
 * per turn.
 */
async function encodeInSlices<S extends z.ZodArray>(schema: S, items: z.output<S>): Promise<string[]> {
  const parts = ['['];
  for (let start = 0; start < items.length; start += JSON_SLICE) {
    if (start > 0) {
      parts.push(',');
      await yieldToEventLoop();
    }
    const slice = items.slice(start, start + JSON_SLICE) as z.output<S>;
    parts.push(JSON.stringify(z.encode(schema, slice)).slice(1, -1));
  }
  parts.push(']');
  return parts;
}

/** The texts in slices of at most TEXT_SLICE characters, never splitting a surrogate pair. */
function* slices(texts: readonly string[]): Generator<string> {
  for (const text of texts) {
    if (text.length <= TEXT_SLICE) {
      yield text;
      continue;
    }
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + TEXT_SLICE);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      yield text.slice(start, end);
      start = end;
    }
  }
}

/**
 * The UTF-8 of the concatenated texts in one buffer of its own (as bufferBody makes), written a slice
 * at a time: writing 30 MB at once holds the event loop for a few hundred milliseconds here, mostly
 * the first touch of the new memory.
 */
async function bytesInSlices(texts: readonly string[]): Promise<CachedBody> {
  let length = 0;
  for (const slice of slices(texts)) length += Buffer.byteLength(slice);
  const buffer = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  let written = 0;
  for (const slice of slices(texts)) {
    offset += buffer.write(slice, offset);
    written += slice.length;
    if (written >= TEXT_SLICE) {
      written = 0;
      await yieldToEventLoop();
    }
  }
  return { value: buffer, bytes: length };
}

const jsonSchemaObject = z.record(z.string(), z.unknown()).describe('JSON Schema of the tool input');

const anthropicToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: jsonSchemaObject,
});

const openAiToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: jsonSchemaObject,
    strict: z.boolean().optional(),
  }),
});

/** The base of absolute links: SKILLREG_PUBLIC_URL, else what the client called (proxy headers honoured). */
export function publicBaseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

function selectionOf(query: { name?: string[]; tag?: string; q?: string }): SkillSelection {
  return { names: query.name, tag: query.tag, q: query.q?.trim() || undefined };
}

const anthropicToolsSchema = z.array(anthropicToolSchema);
const openAiToolsSchema = z.array(openAiToolSchema);

/** A rendered prompt as the cache keeps it: the bytes sent and, for the text layouts, their token count. */
interface RenderedPrompt {
  body: Buffer;
  tokens?: number;
}

/**
 * GET /prompt and GET /tools: what a remote agent needs to use the registry's skills. Renderings are
 * kept in the read cache for the catalogue revision they were made at (plus the loads revision when a
 * budget orders skills by use), so at 100,000 skills a poll does not render the catalogue again.
 */
const agentRoutes: FastifyPluginAsyncZod = async (app) => {
  const cache = app.readCache;
  const readable = app.authorize('read');

  app.get(
    '/prompt',
    {
      preHandler: readable,
      schema: {
        tags: ['agents'],
        summary: 'System-prompt fragment listing the skills',
        description:
          'One string to append to a system message: short instructions (skills are not tools; call `load_skill` with the name before following one) and the selected skills in the `<available_skills>` layout (`format=xml`, default), as a Markdown list (`format=markdown`), or as `{prompt, tokens, included, omitted}` (`format=json`). Each skill carries its absolute content URL. Select with `name` (repeatable), `tag` and `q`. `budget=N` keeps the whole fragment within N tokens (o200k_base), dropping the least recently loaded skills first (then the longest) and naming them. Skills with `disable-model-invocation: true` are never listed.',
        operationId: 'getPrompt',
        querystring: selectionQuery.extend({
          format: z.enum(['xml', 'markdown', 'json']).default('xml'),
          budget: z.coerce
            .number()
            .int()
            .min(1)
            .max(10_000_000)
            .optional()
            .describe('Largest size of the whole fragment in tokens (o200k_base)'),
        }),
        response: {
          200: z
            .union([z.string().describe('text/plain (xml layout) or text/markdown'), promptJsonSchema])
            .describe('The fragment in the requested format'),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const { format, budget } = request.query;
      const selection = selectionOf(request.query);
      const baseUrl = publicBaseUrl(request, app.config.publicUrl);
      const { revision, loadsRevision } = await cache.current();
      const style = format === 'markdown' ? 'markdown' : 'xml';
      const key = `prompt|${JSON.stringify([format, selection, budget ?? null, baseUrl])}`;
      const render = async () => {
        const selected = await selectAgentSkills(cache.agentCatalogue, selection);
        const result: PromptResult = await buildPrompt(selected.skills, {
          style,
          baseUrl,
          tag: selection.tag,
          budget,
          describe: (listed) => cache.agentCatalogue.describe(listed),
        });
        const body =
          format === 'json'
            ? await promptJsonBody(
                { ...result, omitted: [...result.omitted, ...selected.omitted] },
                result.parts,
              )
            : await textBody(result.parts);
        return { value: { body: body.value, tokens: result.tokens }, bytes: body.bytes + 64 };
      };
      let rendered: RenderedPrompt;
      let etag: string;
      try {
        if (budget === undefined) {
          etag = revisionEtag(revision, 'prompt', format, selection, null, baseUrl, null);
          if (replyNotModified(request, reply, etag, REVALIDATE)) return reply;
          rendered = await cache.catalogueWide(key, revision, render, true);
        } else {
          // Which skills a budget drops depends on recent loads, which do not bump the revision: the
          // ETag names the loads revision the rendering was made at.
          const byLoads = await cache.byLoads(key, revision, loadsRevision, render);
          rendered = byLoads.value;
          etag = revisionEtag(
            revision,
            'prompt',
            format,
            selection,
            budget,
            baseUrl,
            String(byLoads.loadsRevision),
          );
          if (replyNotModified(request, reply, etag, REVALIDATE)) return reply;
        }
      } catch (error) {
        // A refusal must not carry the validators of the representation it failed to produce.
        reply.removeHeader('etag');
        reply.removeHeader('cache-control');
        throw error;
      }
      if (format === 'json') return sendJson(reply, rendered.body);
      reply.header('x-prompt-tokens', String(rendered.tokens));
      return sendBytes(
        reply,
        style === 'markdown' ? 'text/markdown; charset=utf-8' : 'text/plain; charset=utf-8',
        rendered.body,
      );
    },
  );

  app.get(
    '/tools',
    {
      preHandler: readable,
      schema: {
        tags: ['agents'],
        summary: 'Tool definitions for loading skills',
        description:
          "`load_skill {name, version?}` and `read_skill_file {name, path}`, ready to pass to a model API: `provider=anthropic` (`[{name, description, input_schema}]`, default) or `provider=openai` (Chat Completions `[{type: 'function', function: {name, description, parameters, strict}}]`). The `name` of load_skill is an enum of the selected skills (same selection as GET /prompt, without skills that disable model invocation; left out above 250 skills). `strict=true` (default for openai) makes every property required, `version` nullable, as OpenAI's strict mode needs.",
        operationId: 'getTools',
        querystring: selectionQuery.extend({
          provider: z.enum(['anthropic', 'openai']).default('anthropic'),
          strict: z
            .enum(['true', 'false'])
            .default('true')
            .transform((value) => value === 'true')
            .describe('openai only: strict-mode schemas (default true)'),
        }),
        response: {
          200: z
            .union([z.array(anthropicToolSchema), z.array(openAiToolSchema)])
            .describe('The tools array for the provider'),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const { provider, strict } = request.query;
      const selection = selectionOf(request.query);
      const revision = await cache.revision();
      const etag = revisionEtag(revision, 'tools', provider, provider === 'openai' && strict, selection);
      if (replyNotModified(request, reply, etag, REVALIDATE)) return reply;
      const body = await cache.catalogueWide(
        `tools|${JSON.stringify([provider, provider === 'openai' && strict, selection])}`,
        revision,
        async () => {
          const { skills: selected } = await selectAgentSkills(cache.agentCatalogue, selection, {
            descriptions: false,
          });
          const names = selected.map((skill) => skill.name);
          return provider === 'openai'
            ? jsonBody(openAiToolsSchema, openAiTools(names, { strict }))
            : jsonBody(anthropicToolsSchema, anthropicTools(names));
        },
        true,
      );
      return sendJson(reply, body);
    },
  );
};

export default agentRoutes;
