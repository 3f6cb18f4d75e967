import { z } from 'zod';
import { computedHashSchema, scanVerdictSchema } from './skills.js';

/** What agents read: search results, tool definitions, the prompt fragment as JSON, the MCP tools' output. */

const whyMatched = z
  .string()
  .describe(
    'The request words found in each field, spellings read as another word and related words, as one line',
  );

/** One result of search_skills and GET /search (src/services/skill-search.ts ModelSearchResult). */
export const searchResultSchema = z.object({
  name: z.string().describe('Pass to load_skill (GET /skills/{name}/content)'),
  description: z.string(),
  version: z.string().describe('The version load_skill loads by default'),
  why: whyMatched,
  score: z.number().describe('Relevance (BM25F); comparable within one search only'),
  namespace: z.string().optional().describe('In a view: the layer (namespace) the skill resolves to'),
});

/** GET /search: what the search_skills tool answers a model. */
export const searchResponseSchema = z.object({
  query: z.string().describe('The request as searched (trimmed)'),
  results: z.array(searchResultSchema).describe('Best first'),
});

/** GET /api/search: the ranking in the shape the public `skills` CLI reads. */
export const skillsCliSearchResponseSchema = z.object({
  skills: z.array(
    z.object({
      id: z.string().describe('The skill name (the CLI shows it as a slug)'),
      name: z.string(),
      source: z.string().describe('`npx skills add <source>` installs this skill from the scope searched'),
      description: z.string(),
    }),
  ),
});

const jsonSchemaObject = z.record(z.string(), z.unknown()).describe('JSON Schema of the tool input');

export const anthropicToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: jsonSchemaObject,
});

export const openAiToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: jsonSchemaObject,
    strict: z.boolean().optional(),
  }),
});

export const anthropicToolsSchema = z.array(anthropicToolSchema);
export const openAiToolsSchema = z.array(openAiToolSchema);

/** GET /tools. */
export const toolsResponseSchema = z
  .union([anthropicToolsSchema, openAiToolsSchema])
  .describe('The tools array for the provider');

const omittedSchema = z.object({
  name: z.string(),
  reason: z
    .enum(['budget', 'not-found', 'model-invocation-disabled'])
    .describe(
      'budget: dropped to fit budget= (the search-first fragment names it, or counts it when the names do not fit); not-found: a name= with no current version under the tag; model-invocation-disabled: disable-model-invocation is true',
    ),
});

/** The JSON layout names at most this many omitted skills, so the answer does not grow with the catalogue. */
export const OMITTED_NAMED = 100;

/** GET /prompt with format=json (src/render/prompt-document.ts writes it a slice at a time). */
export const promptJsonSchema = z.object({
  prompt: z.string().describe('The fragment in the xml layout, ready to append to a system message'),
  tokens: z.number().int().describe('Tokens of prompt (o200k_base)'),
  included: z.array(
    z.object({
      name: z.string(),
      namespace: z.string().optional().describe('In a view: the layer (namespace) the skill resolves to'),
      version: z.string(),
      location: z.string().describe('Absolute URL of the skill body (layer 2)'),
      tokens: z.object({
        entry: z.number().int().describe('Tokens this skill adds to the fragment'),
        body: z.number().int().describe('Tokens of its body, once loaded'),
      }),
      scan: scanVerdictSchema,
    }),
  ),
  omitted: z
    .array(omittedSchema)
    .describe(
      `Skills left out, at most ${OMITTED_NAMED} whatever the catalogue's size: names asked for that were not found, then skills dropped for the budget (most loaded first), then skills that disable model invocation. omittedCount counts them all`,
    ),
  omittedCount: z
    .number()
    .int()
    .describe('How many skills were left out, named in omitted or not (omitted names at most 100)'),
  searchFirst: z
    .boolean()
    .describe(
      'true when the instructions send the model to the search_skills tool for skills not listed: mode=search, or a budget that could not hold every selected skill',
    ),
});

/** GET /prompt: the fragment as text, or with format=json the document above. */
export const promptResponseSchema = z
  .union([z.string().describe('text/plain (xml layout) or text/markdown'), promptJsonSchema])
  .describe('The fragment in the requested format');

export const DISCOVERY_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json' as const;

export const discoveryEntrySchema = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string().describe('The version the entry installs (agentskills draft, PR #380)'),
  type: z.literal('archive'),
  url: z.string().describe('Absolute URL of the version-pinned bundle (immutable)'),
  digest: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .describe(
      "The archive's hash: sha256 of the exact bytes of the zip served at url (named digest by the discovery schema). Not the version's digest of GET /skills/{name}, which is over its files whatever the archive",
    ),
  namespace: z.string().optional().describe('In a view: the layer (namespace) the skill resolves to'),
  computedHash: computedHashSchema,
});

/** GET /.well-known/agent-skills/index.json. */
export const discoveryIndexSchema = z
  .object({
    $schema: z.literal(DISCOVERY_SCHEMA),
    skills: z.array(discoveryEntrySchema),
  })
  .describe('Agent Skills discovery index 0.2.0');

/** The MCP list_skills tool's structuredContent. */
export const listSkillsOutputSchema = z.object({
  skills: z.array(z.object({ name: z.string(), description: z.string(), version: z.string() })),
  truncated: z.boolean().describe('true when more skills match than were returned: see nextCursor'),
  nextCursor: z.string().optional().describe('Pass as cursor to list the next page'),
});

/** The MCP search_skills tool's structuredContent: the results GET /search answers. */
export const searchSkillsOutputSchema = z.object({
  results: z.array(searchResultSchema).describe('Best first; pass a name to load_skill'),
});

/** GET {scope}/marketplace.json: a Claude Code plugin marketplace (src/git/marketplaces.ts). */
export const claudeMarketplaceSchema = z
  .object({
    name: z
      .string()
      .describe('Stable per scope: `skill-registry`, `skill-registry-ns-<ns>`, `skill-registry-view-<view>`'),
    owner: z.object({ name: z.string() }),
    metadata: z.object({ description: z.string() }),
    plugins: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        version: z.string(),
        source: z
          .object({
            source: z.literal('url'),
            url: z
              .string()
              .describe("Absolute URL of the skill's git repository ({scope}/git/skills/{name}.git)"),
            ref: z.string().describe('The version tag, v<version>'),
            sha: z
              .string()
              .regex(/^[0-9a-f]{40}$/)
              .describe("The version's commit"),
          })
          .describe('A git source pinned by tag and commit'),
        strict: z.literal(false),
        skills: z.array(z.string()).describe('["./"]: the repository root is the skill'),
      }),
    ),
  })
  .describe('Claude Code plugin marketplace: one plugin per current skill of the scope');
