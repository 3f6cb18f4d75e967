import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Registry } from '../../services/registry.js';
import {
  clawhubListResponseSchema,
  clawhubResolveResponseSchema,
  clawhubSearchResponseSchema,
  clawhubSkillResponseSchema,
  clawhubVersionResponseSchema,
  clawhubVersionsResponseSchema,
} from '../../wire/clawhub.js';
import { sendAnswer } from '../answer.js';
import { problemResponses } from '../problem.js';
import { mounted, mountParams, mountProblems, type ReadMount, readAccess, useScope } from '../read-mounts.js';
import { withoutNul } from '../schemas.js';

/**
 * The ClawHub-compatible read API (`clawhub --registry <registry>{scope} search|explore|inspect|install|
 * update|list`), mapped onto the registry's own reads by src/services/clawhub.ts.
 */
const clawhubRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: ReadMount }> = async (
  app,
  { registry, mount },
) => {
  const readable = app.authorize('read', readAccess(mount));
  useScope(app, registry, mount);
  const { clawhub } = registry;
  const scopeParams = mountParams(mount);
  const slug = withoutNul(z.string().min(1).max(200)).describe('The skill name');
  const owner = z.string().max(200).optional().describe("Ignored: a skill's owner is its namespace");
  const limit = (fallback: number) => z.coerce.number().int().min(1).max(200).default(fallback);
  const tags = ['clawhub'];

  app.get(
    '/api/v1/search',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: search',
        description: "`clawhub search <words>`: the registry's one search ranking.",
        ...mounted(mount, 'clawhubSearch'),
        ...(mount === 'root' ? {} : { params: scopeParams }),
        querystring: z.object({
          q: withoutNul(z.string().max(500)).default(''),
          limit: limit(25),
          mode: z.string().max(20).optional(),
        }),
        response: {
          200: clawhubSearchResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request) => clawhub.searchSkills(request.scope, request.query.q, request.query.limit),
  );

  app.get(
    '/api/v1/skills',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: list skills',
        description:
          '`clawhub explore`: the current skills by name, a page at a time (`sort` is accepted; the order is by name).',
        ...mounted(mount, 'clawhubListSkills'),
        ...(mount === 'root' ? {} : { params: scopeParams }),
        querystring: z.object({
          limit: limit(25),
          cursor: z.string().max(1000).optional(),
          sort: z.string().max(40).optional(),
          prefix: withoutNul(z.string().max(200)).optional(),
        }),
        response: {
          200: clawhubListResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403)),
        },
      },
    },
    async (request) => clawhub.list(request.scope, request.query),
  );

  const skillParams = scopeParams.extend({ slug });

  app.get(
    '/api/v1/skills/:slug',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: one skill',
        description: '`clawhub inspect <slug>`, and the first request of `install` and `update`.',
        ...mounted(mount, 'clawhubGetSkill'),
        params: skillParams,
        querystring: z.object({ ownerHandle: owner }),
        response: {
          200: clawhubSkillResponseSchema,
          ...problemResponses(...mountProblems(mount, 401, 403, 404)),
        },
      },
    },
    async (request) => clawhub.skill(request.scope, request.params.slug),
  );

  app.get(
    '/api/v1/skills/:slug/versions',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: "ClawHub: a skill's versions",
        description: '`clawhub inspect <slug> --versions`: every version not yanked, newest first.',
        ...mounted(mount, 'clawhubListVersions'),
        params: skillParams,
        querystring: z.object({ limit: limit(50), cursor: z.string().max(1000).optional() }),
        response: {
          200: clawhubVersionsResponseSchema,
          ...problemResponses(...mountProblems(mount, 401, 403, 404)),
        },
      },
    },
    async (request) => clawhub.versions(request.scope, request.params.slug),
  );

  app.get(
    '/api/v1/skills/:slug/versions/:version',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: one version and its files',
        description:
          '`clawhub inspect <slug> --version <v> --files`, and `install --version <v>` before it downloads.',
        ...mounted(mount, 'clawhubGetVersion'),
        params: skillParams.extend({ version: withoutNul(z.string().min(1).max(100)) }),
        response: {
          200: clawhubVersionResponseSchema,
          ...problemResponses(...mountProblems(mount, 401, 403, 404)),
        },
      },
    },
    async (request) => clawhub.version(request.scope, request.params.slug, request.params.version),
  );

  app.get(
    '/api/v1/skills/:slug/file',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: one file',
        description:
          '`clawhub inspect <slug> --file <path>`: the file as GET /skills/{name}/files/{path} serves it.',
        ...mounted(mount, 'clawhubGetFile'),
        params: skillParams,
        querystring: z.object({
          path: withoutNul(z.string().min(1).max(4096)),
          version: withoutNul(z.string().max(100)).optional(),
        }),
        response: {
          200: z.unknown().describe('The file'),
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      const { version, path } = request.query;
      const selector = version && version !== 'latest' ? { version } : {};
      return sendAnswer(
        request,
        reply,
        await registry.reads.fileAnswer(request.scope, request.params.slug, selector, path),
      );
    },
  );

  app.get(
    '/api/v1/download',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: download a version',
        description:
          '`clawhub install` and `update`: the installable zip of a version (`latest` or none for the latest), the same archive the discovery index links.',
        ...mounted(mount, 'clawhubDownload'),
        ...(mount === 'root' ? {} : { params: scopeParams }),
        querystring: z.object({
          slug,
          version: withoutNul(z.string().max(100)).optional(),
          tag: z.string().max(64).optional(),
          ownerHandle: owner,
        }),
        response: {
          200: z.unknown().describe('application/zip'),
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request, reply) => {
      const { slug: name, version, tag } = request.query;
      const selector = version && version !== 'latest' ? { version } : tag ? { tag } : {};
      return sendAnswer(
        request,
        reply,
        await registry.bundles.bundleAnswer(request.scope, name, selector, 'zip', 'installable'),
      );
    },
  );

  app.get(
    '/api/v1/resolve',
    {
      preHandler: readable,
      schema: {
        tags,
        summary: 'ClawHub: which version a folder is',
        description:
          '`clawhub update`: the version whose files have the fingerprint the CLI computed over the installed folder (sha256 of sorted `path:sha256` lines), and the latest.',
        ...mounted(mount, 'clawhubResolve'),
        ...(mount === 'root' ? {} : { params: scopeParams }),
        querystring: z.object({
          slug,
          hash: z.string().regex(/^[0-9a-f]{64}$/, 'hash must be 64 lowercase hex digits (sha256)'),
          ownerHandle: owner,
        }),
        response: {
          200: clawhubResolveResponseSchema,
          ...problemResponses(...mountProblems(mount, 400, 401, 403, 404)),
        },
      },
    },
    async (request) => clawhub.resolveFingerprint(request.scope, request.query.slug, request.query.hash),
  );
};

export default clawhubRoutes;
