import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import { MAX_QUERY_LENGTH } from '../../services/skill-search.js';
import {
  catalogueResponseSchema,
  contentResponseSchema,
  dsseEnvelopeSchema,
  skillDetailSchema,
  versionsResponseSchema,
} from '../../wire/index.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { nameParam, selectorQuery, withoutNul } from '../schemas.js';

/**
 * Layers 1 to 3 over HTTP. Every rule (which version, what each representation is, how long it stays
 * true) is the read service's; a route validates, authorizes (the `readable` hook runs first) and
 * sends the answer.
 */
const skillsReadRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const { reads, bundles } = registry;
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);
  const where = mountParams(mount);
  const skillParams = where.extend(nameParam.shape);

  app.get(
    '/skills',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'List the catalogue (layer 1)',
        description:
          'Names and descriptions of current skills, the layer-1 catalogue an agent puts in its system prompt, by name. `q` searches instead: a request in plain words (a task description, a paragraph of context, any language, typos tolerated) ranked over name, description, headings and body, best first, each item with `match` saying why; the same ranking as the `search_skills` tool. `tag` lists the versions a dist-tag points at.',
        ...mounted(mount, 'listSkills'),
        ...(mount === 'root' ? {} : { params: where }),
        querystring: z.object({
          q: withoutNul(z.string().max(MAX_QUERY_LENGTH))
            .optional()
            .describe('Search: the task in plain words; results are ranked best first'),
          tag: withoutNul(z.string().max(64)).optional().describe('Dist-tag to list (default latest)'),
          limit: z.coerce.number().int().min(1).max(500).default(50),
          cursor: z.string().max(500).optional().describe('nextCursor of the previous page'),
        }),
        response: {
          200: catalogueResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request, reply) =>
      sendAnswer(request, reply, await reads.cataloguePage(request.scope, request.query)),
  );

  app.get(
    '/skills/:name',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'Metadata of one version',
        description:
          'Frontmatter, files, dist-tags and a summary of all versions. Selects `latest` unless version= or tag= is given.',
        ...mounted(mount, 'getSkill'),
        params: skillParams,
        querystring: selectorQuery,
        response: {
          200: skillDetailSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) =>
      sendAnswer(request, reply, await reads.metadata(request.scope, request.params.name, request.query)),
  );

  app.get(
    '/skills/:name/content',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'The skill body (layer 2)',
        description:
          'SKILL.md without its frontmatter, as text/markdown. `format=json` gives name, version, digest, frontmatter, body and files; `format=xml` gives `<skill name="...">body</skill>`. `arguments=` substitutes `$ARGUMENTS` (the whole string), `$ARGUMENTS[N]` and `$N` (0-based, split shell-style) and names declared in frontmatter `arguments`, as Claude Code does; a body without placeholders gets `ARGUMENTS: <arguments>` appended.',
        ...mounted(mount, 'getSkillContent'),
        params: skillParams,
        querystring: selectorQuery.extend({
          format: z.enum(['markdown', 'json', 'xml']).default('markdown'),
          arguments: z
            .string()
            .max(16_384)
            .optional()
            .describe('Arguments for the skill, as typed after /skill-name (quotes group words)'),
        }),
        response: {
          200: contentResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      const { format, arguments: argumentString, ...selector } = request.query;
      return sendAnswer(
        request,
        reply,
        await reads.content(request.scope, request.params.name, selector, format, argumentString),
      );
    },
  );

  app.get(
    '/skills/:name/files/*',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'One bundled file (layer 3)',
        description: 'The exact bytes of one file of the bundle, with a content type from its extension.',
        ...mounted(mount, 'getSkillFile'),
        params: skillParams.extend({
          '*': z.string().min(1).describe('Path inside the bundle, e.g. references/api.md'),
        }),
        querystring: selectorQuery,
        response: {
          200: z.any().describe('The file bytes'),
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) =>
      sendAnswer(
        request,
        reply,
        await reads.fileAnswer(request.scope, request.params.name, request.query, request.params['*']),
      ),
  );

  app.get(
    '/skills/:name/bundle',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'The whole version as an archive',
        description:
          "A byte-for-byte deterministic tar.gz (default) or zip of every file of the version, files at the archive root, as installers and hosts want it: where the registry filled in the name or description (SKILL.md without frontmatter, or without those keys), SKILL.md opens with frontmatter holding them, the author's other keys after, the rest of SKILL.md and every other file byte for byte. `contents=as-published` gives the files exactly as published, whose digest (`x-skill-digest`, the version's digest, signed in its attestation) is the same either way. `Repr-Digest` is the sha256 of the archive served.",
        ...mounted(mount, 'getSkillBundle'),
        params: skillParams,
        querystring: selectorQuery.extend({
          format: z.enum(['tar.gz', 'zip']).default('tar.gz'),
          contents: z
            .enum(['installable', 'as-published'])
            .default('installable')
            .describe(
              '`installable` (default): SKILL.md with completed frontmatter where the registry filled it in; `as-published`: every file as stored',
            ),
        }),
        response: {
          200: z.any().describe('The archive bytes'),
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      const { format, contents, ...selector } = request.query;
      return sendAnswer(
        request,
        reply,
        await bundles.bundleAnswer(request.scope, request.params.name, selector, format, contents),
      );
    },
  );

  app.get(
    '/skills/:name/attestation',
    {
      preHandler: readable,
      schema: {
        tags: ['trust'],
        summary: "The registry's signed provenance of a version",
        description:
          "A DSSE envelope (payloadType application/vnd.in-toto+json, Ed25519) whose payload is an in-toto Statement v1: subject `name@version` (prefixed by the namespace outside `default`) with the bundle's sha256 digest, predicate: namespace, name, version, publisher (token name), publishedAt, the scan verdict at publish and the registry's URL. Verify with the keys at /.well-known/skillreg/keys.json (`kid` = signature keyid), or `skillreg verify`.",
        ...mounted(mount, 'getSkillAttestation'),
        params: skillParams,
        querystring: selectorQuery,
        response: {
          200: dsseEnvelopeSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) =>
      sendAnswer(
        request,
        reply,
        await registry.attestations.answer(request.scope, request.params.name, request.query),
      ),
  );

  app.get(
    '/skills/:name/versions',
    {
      preHandler: readable,
      schema: {
        tags: ['versions'],
        summary: 'List the versions of a skill',
        description:
          'Every version, newest first by semver precedence, including yanked ones, with the dist-tags on each.',
        ...mounted(mount, 'listSkillVersions'),
        params: skillParams,
        response: {
          200: versionsResponseSchema,
          ...problemResponses(...mountProblems(mount, 401, 403, 404)),
        },
      },
    },
    async (request, reply) =>
      sendAnswer(request, reply, await reads.versionsAnswer(request.scope, request.params.name)),
  );
};

export default skillsReadRoutes;
