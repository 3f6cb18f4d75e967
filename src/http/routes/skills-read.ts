import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import mime from 'mime-types';
import { z } from 'zod';
import { normalizeEntryPath } from '../../bundle/paths.js';
import { BundleError } from '../../bundle/types.js';
import { BadRequestError } from '../../errors.js';
import { argumentsFingerprint, declaredArgumentNames, substituteArguments } from '../../render/arguments.js';
import { renderSkillXml } from '../../render/skill-content.js';
import type { VersionSelector } from '../../storage/skills-repository.js';
import {
  bufferBody,
  cacheControlFor,
  digestEtag,
  jsonBody,
  REVALIDATE,
  replyNotModified,
  revisionEtag,
  sendBytes,
  sendJson,
} from '../caching.js';
import { keepResponse } from '../plugins/response-cache.js';
import { problemResponses } from '../problem.js';
import type { ResponseValidity } from '../response-cache.js';
import {
  catalogueItemSchema,
  fileEntrySchema,
  nameParam,
  selectorQuery,
  skillDetailSchema,
  versionSummarySchema,
  withoutNul,
} from '../schemas.js';

/** Exactly one of version or tag; both at once is ambiguous. */
export function selectorOf(query: { version?: string; tag?: string }): VersionSelector {
  if (query.version !== undefined && query.tag !== undefined) {
    throw new BadRequestError('pass either version= or tag=, not both', { parameters: ['version', 'tag'] });
  }
  return query.version !== undefined ? { version: query.version } : { tag: query.tag };
}

/**
 * A file path as stored: canonical (normalizeEntryPath ran on every path at publish). A path that is
 * no valid bundle path (`..`, absolute, NUL or control characters, after URL decoding) is refused
 * before any lookup; NUL would otherwise reach PostgreSQL and fail as a 500.
 */
export function bundlePathOf(raw: string): string {
  try {
    return normalizeEntryPath(raw);
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    throw new BadRequestError(
      `${error.message}; file paths are relative to the skill root, e.g. references/api.md`,
      { parameter: 'path' },
    );
  }
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-sh|toml))/;

/** Content type of a bundled file: by extension, with charset for text; unknown files are bytes. */
export function contentTypeFor(path: string, bytes?: Uint8Array): string {
  const type =
    mime.lookup(path) || (bytes && looksLikeText(bytes) ? 'text/plain' : 'application/octet-stream');
  return TEXT_TYPES.test(type) ? `${type}; charset=utf-8` : type;
}

/** Files such as LICENSE or Makefile have no extension; valid UTF-8 without NUL bytes is served as text. */
function looksLikeText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 8192);
  if (sample.includes(0)) return false;
  try {
    // stream: a sample cut inside a multi-byte character is still text; a fresh decoder keeps no state.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: true });
    return true;
  } catch {
    return false;
  }
}

const catalogueResponseSchema = z.object({
  items: z.array(catalogueItemSchema),
  nextCursor: z.string().nullable(),
});

const contentJsonSchema = z.object({
  name: z.string(),
  version: z.string(),
  digest: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  body: z.string(),
  files: z.array(fileEntrySchema),
});

const versionsResponseSchema = z.array(versionSummarySchema);

const CONTENT_TYPES = {
  markdown: 'text/markdown; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  json: 'application/json; charset=utf-8',
} as const;

/** How long an answer read through `selector` stays true: forever for an exact version. */
function validityOf(name: string, selector: VersionSelector, revision: number): ResponseValidity {
  return selector.version !== undefined ? { kind: 'immutable' } : { kind: 'skill', skill: name, revision };
}

/**
 * Reads go through the read cache (src/cache): the catalogue revision comes from memory while the
 * change feed is live, so a revalidation (304) costs no query; bodies are kept serialised. Every
 * request is still authorized on its own (the `readable` hook runs before the handler).
 */
const skillsReadRoutes: FastifyPluginAsyncZod = async (app) => {
  const { skills } = app.repositories;
  const cache = app.readCache;
  const readable = app.authorize('read');

  app.get(
    '/skills',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'List the catalogue (layer 1)',
        description:
          'Names and descriptions of current skills, the layer-1 catalogue an agent puts in its system prompt. `q` searches names and descriptions (full-text and fuzzy name match); `tag` lists the versions a dist-tag points at.',
        operationId: 'listSkills',
        querystring: z.object({
          q: withoutNul(z.string().max(200))
            .optional()
            .describe('Full-text search over name and description'),
          tag: withoutNul(z.string().max(64)).optional().describe('Dist-tag to list (default latest)'),
          limit: z.coerce.number().int().min(1).max(500).default(50),
          cursor: z.string().max(500).optional().describe('nextCursor of the previous page'),
        }),
        response: {
          200: catalogueResponseSchema,
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const revision = await cache.revision();
      if (replyNotModified(request, reply, revisionEtag(revision, 'skills', request.query), REVALIDATE))
        return reply;
      const body = await cache.catalogueWide(
        `skills|${JSON.stringify(request.query)}`,
        revision,
        async () => {
          const page = await skills.catalogue(request.query);
          return jsonBody(catalogueResponseSchema, {
            items: page.items.map(({ frontmatter: _frontmatter, ...item }) => ({
              ...item,
              updatedAt: item.updatedAt.toISOString(),
            })),
            nextCursor: page.nextCursor,
          });
        },
        true,
      );
      keepResponse(request, { validity: { kind: 'catalogue', revision } });
      return sendJson(reply, body);
    },
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
        operationId: 'getSkill',
        params: nameParam,
        querystring: selectorQuery,
        response: { 200: skillDetailSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const selector = selectorOf(request.query);
      const { name } = request.params;
      const revision = await cache.revision();
      // The document shows the yank flag, dist-tags and versions: per skill, even for an exact version.
      const body = await cache.perSkill(
        name,
        `detail|${JSON.stringify(request.query)}`,
        revision,
        async () => {
          const record = await skills.resolve(name, selector);
          const [files, distTags, versions] = await Promise.all([
            skills.files(record.id),
            skills.distTags(record.skillId),
            skills.versions(record.name),
          ]);
          return jsonBody(skillDetailSchema, {
            name: record.name,
            version: record.version,
            description: record.description,
            digest: record.digest,
            frontmatter: record.frontmatter,
            createdAt: record.createdAt.toISOString(),
            yanked: record.yankedAt !== null,
            tokens: { description: record.tokensDescription, body: record.tokensBody },
            size: record.totalSize,
            files: files.map(({ path, size, digest }) => ({ path, size, digest: `sha256:${digest}` })),
            distTags,
            versions: versions.map((summary) => ({
              ...summary,
              createdAt: summary.createdAt.toISOString(),
            })),
          });
        },
        true,
      );
      // Even for an exact version the answer lists dist-tags and versions, which change with every write.
      const etag = revisionEtag(revision, 'skill', name, request.query);
      if (replyNotModified(request, reply, etag, cacheControlFor(selector))) return reply;
      keepResponse(request, { validity: { kind: 'skill', skill: name, revision } });
      return sendJson(reply, body);
    },
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
        operationId: 'getSkillContent',
        params: nameParam,
        querystring: selectorQuery.extend({
          format: z.enum(['markdown', 'json', 'xml']).default('markdown'),
          arguments: z
            .string()
            .max(16_384)
            .optional()
            .describe('Arguments for the skill, as typed after /skill-name (quotes group words)'),
        }),
        response: {
          200: z
            .union([z.string().describe('text/markdown or application/xml'), contentJsonSchema])
            .describe('The body in the requested format'),
          ...problemResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const selector = selectorOf(request.query);
      const revision = await cache.revision();
      const record = await cache.resolve(request.params.name, selector, revision);
      const { format, arguments: argumentString } = request.query;
      // The JSON rendering names the version, and one digest can be published under several versions.
      const rendering = format === 'json' ? `json.${record.version}` : format;
      const variant =
        argumentString === undefined ? rendering : `${rendering}.a${argumentsFingerprint(argumentString)}`;
      if (replyNotModified(request, reply, digestEtag(record.digest, variant), cacheControlFor(selector)))
        return reply;
      reply.header('x-skill-version', record.version);
      const { loads } = app.repositories;
      loads.record(record.name);
      if (argumentString === undefined) {
        // Repeated by the response cache, which counts each body it serves as a load too.
        keepResponse(request, {
          validity: validityOf(record.name, selector, revision),
          onServe: () => loads.record(record.name),
        });
        // The cached record holds the body already: sent as it is rather than kept a second time.
        if (format === 'markdown') return reply.type(CONTENT_TYPES.markdown).send(record.body);
        // Other renderings depend on the version alone: kept serialised.
        const rendered = await cache.immutable(
          `content|${record.id}|${format}`,
          async () => {
            if (format === 'xml') return bufferBody(renderSkillXml(record.name, record.body));
            const files = await skills.files(record.id);
            return jsonBody(contentJsonSchema, {
              name: record.name,
              version: record.version,
              digest: record.digest,
              frontmatter: record.frontmatter,
              body: record.body,
              files: files.map(({ path, size, digest }) => ({ path, size, digest: `sha256:${digest}` })),
            });
          },
          true,
        );
        return sendBytes(reply, CONTENT_TYPES[format], rendered);
      }
      const body = substituteArguments(record.body, argumentString, {
        names: declaredArgumentNames(record.frontmatter),
      });
      if (format === 'json') {
        const files = await skills.files(record.id);
        return {
          name: record.name,
          version: record.version,
          digest: record.digest,
          frontmatter: record.frontmatter,
          body,
          files: files.map(({ path, size, digest }) => ({ path, size, digest: `sha256:${digest}` })),
        };
      }
      if (format === 'xml')
        return reply.type('application/xml; charset=utf-8').send(renderSkillXml(record.name, body));
      return reply.type('text/markdown; charset=utf-8').send(body);
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
        operationId: 'getSkillFile',
        params: nameParam.extend({
          '*': z.string().min(1).describe('Path inside the bundle, e.g. references/api.md'),
        }),
        querystring: selectorQuery,
        response: {
          200: z.any().describe('The file bytes'),
          ...problemResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const selector = selectorOf(request.query);
      const path = bundlePathOf(request.params['*']);
      const revision = await cache.revision();
      const record = await cache.resolve(request.params.name, selector, revision);
      // A file of a version never changes; a large one is served without being kept (maxEntryBytes).
      const file = await cache.immutable(
        `file|${record.id}|${path}`,
        async () => {
          const stored = await skills.readFile(record, path);
          const { value } = bufferBody(stored.bytes);
          return {
            value: { bytes: value, digest: stored.digest, type: contentTypeFor(path, stored.bytes) },
            bytes: value.byteLength + path.length * 2 + 200,
          };
        },
        true,
      );
      if (replyNotModified(request, reply, digestEtag(file.digest), cacheControlFor(selector))) return reply;
      // Bundled HTML or SVG must not run as this registry's origin.
      reply.header('content-security-policy', "default-src 'none'; sandbox");
      reply.header('x-content-type-options', 'nosniff');
      reply.header('x-skill-version', record.version);
      keepResponse(request, { validity: validityOf(record.name, selector, revision) });
      return reply.type(file.type).send(file.bytes);
    },
  );

  app.get(
    '/skills/:name/bundle',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'The whole version as an archive',
        description:
          'A byte-for-byte deterministic tar.gz (default) or zip of every file of the version, files at the archive root.',
        operationId: 'getSkillBundle',
        params: nameParam,
        querystring: selectorQuery.extend({ format: z.enum(['tar.gz', 'zip']).default('tar.gz') }),
        response: { 200: z.any().describe('The archive bytes'), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const selector = selectorOf(request.query);
      const revision = await cache.revision();
      const record = await cache.resolve(request.params.name, selector, revision);
      const { format } = request.query;
      if (replyNotModified(request, reply, digestEtag(record.digest, format), cacheControlFor(selector)))
        return reply;
      const archive = await cache.immutable(
        `archive|${record.id}|${format}`,
        async () => {
          const stored = await skills.archive(record, format);
          const { value } = bufferBody(stored.bytes);
          return { value: { bytes: value, sha256: stored.sha256 }, bytes: value.byteLength + 200 };
        },
        true,
      );
      reply.header(
        'content-disposition',
        `attachment; filename="${record.name}-${record.version}.${format === 'zip' ? 'zip' : 'tar.gz'}"`,
      );
      reply.header('x-skill-version', record.version);
      reply.header('x-skill-digest', record.digest);
      reply.header('repr-digest', `sha-256=:${Buffer.from(archive.sha256, 'hex').toString('base64')}:`);
      keepResponse(request, { validity: validityOf(record.name, selector, revision) });
      return reply.type(format === 'zip' ? 'application/zip' : 'application/gzip').send(archive.bytes);
    },
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
        operationId: 'listSkillVersions',
        params: nameParam,
        response: { 200: versionsResponseSchema, ...problemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const revision = await cache.revision();
      if (replyNotModified(request, reply, revisionEtag(revision, 'versions', name), REVALIDATE)) {
        return reply;
      }
      const body = await cache.perSkill(
        name,
        'versions',
        revision,
        async () => {
          const versions = await skills.versions(name);
          return jsonBody(
            versionsResponseSchema,
            versions.map((summary) => ({ ...summary, createdAt: summary.createdAt.toISOString() })),
          );
        },
        true,
      );
      keepResponse(request, { validity: { kind: 'skill', skill: name, revision } });
      return sendJson(reply, body);
    },
  );
};

export default skillsReadRoutes;
