import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import semver from 'semver';
import { z } from 'zod';
import { BundleError } from '../../bundle/types.js';
import { BadRequestError } from '../../domain/app-errors.js';
import { scopePath } from '../../domain/scope.js';
import type { Registry } from '../../services/registry.js';
import type { Upload } from '../../services/skill-writes.js';
import {
  publishResultSchema,
  reviewBodySchema,
  reviewResultSchema,
  tagMoveBodySchema,
  tagMoveResultSchema,
  yankResultSchema,
} from '../../wire/index.js';
import { readMultipartUpload } from '../multipart.js';
import { problemResponses } from '../problem.js';
import { readableNamespaces } from '../read-mounts.js';
import {
  type NamespaceMount,
  nameParam,
  namespaceName,
  namespaceParam,
  requestNamespace,
  withoutNul,
} from '../schemas.js';

const TAG_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** npm's rule: a tag that parses as a version would make `tag=1.0.0` and `version=1.0.0` ambiguous. */
export function checkTagName(tag: string): void {
  if (!TAG_PATTERN.test(tag)) {
    throw new BadRequestError(
      `tag '${tag}' must be 1-64 characters of lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`,
      { parameter: 'tag' },
    );
  }
  if (semver.valid(tag)) {
    throw new BadRequestError(
      `tag '${tag}' looks like a version; tags name channels such as stable or beta`,
      {
        parameter: 'tag',
      },
    );
  }
}

/** Body types accepted by POST /skills, mapped to how they are read. */
export const UPLOAD_CONTENT_TYPES = {
  'application/gzip': 'tar.gz',
  'application/x-gzip': 'tar.gz',
  'application/tar+gzip': 'tar.gz',
  'application/x-tar': 'archive',
  'application/zip': 'zip',
  'application/x-zip-compressed': 'zip',
  'application/octet-stream': 'archive',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/plain': 'markdown',
} as const;

/**
 * Refuses an unsupported body type before it is parsed: a JSON or form body would otherwise be
 * parsed by Fastify's own parsers and reach the handler as if it were an archive.
 */
async function requireUploadType(request: FastifyRequest): Promise<void> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data' || Object.hasOwn(UPLOAD_CONTENT_TYPES, type)) return;
  throw new BundleError(
    415,
    'Unsupported Media Type',
    `content type '${type || 'none'}' is not a skill upload; send application/gzip (tar.gz), application/zip (zip or .skill), multipart/form-data (one file part per file) or text/markdown (a lone SKILL.md)`,
  );
}

function uploadOf(request: FastifyRequest, bytes: unknown): Upload {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const kind = UPLOAD_CONTENT_TYPES[type as keyof typeof UPLOAD_CONTENT_TYPES];
  const body = bytes as Buffer;
  if (kind === 'markdown') return { kind: 'markdown', bytes: body };
  if (kind === 'tar.gz' || kind === 'zip') return { kind: 'archive', bytes: body, declared: kind };
  return { kind: 'archive', bytes: body };
}

/**
 * The write routes, mounted twice (app.ts): at the root, where `?namespace=` names the namespace
 * (default `default`), and under /namespaces/{namespace}/, where the path does.
 */
const skillsWriteRoutes: FastifyPluginAsyncZod<{ registry: Registry; mount: NamespaceMount }> = async (
  app,
  { registry, mount },
) => {
  const { writes } = registry;
  const { limits } = app.config;
  const prefixed = mount === 'prefix';
  const inNamespace = { namespace: requestNamespace };
  const operation = (id: string) => (prefixed ? `${id}InNamespace` : id);
  const where = prefixed ? namespaceParam : z.object({});
  const namespaceQuery = prefixed
    ? {}
    : {
        namespace: namespaceName
          .optional()
          .describe('Namespace to write in (default `default`); the first publish into one creates it'),
      };

  // Binary bodies arrive whole (bounded by bodyLimit) and are read by the bundle layer with its own limits.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(
    Object.keys(UPLOAD_CONTENT_TYPES),
    { parseAs: 'buffer', bodyLimit: app.config.bodyLimit },
    (_request, body, done) => done(null, body),
  );

  app.post(
    '/skills',
    {
      // Both run before the body is read: no upload is buffered for a caller who may not publish it.
      onRequest: [app.authorize('publish', inNamespace), requireUploadType],
      bodyLimit: app.config.bodyLimit,
      schema: {
        tags: ['publish'],
        summary: 'Publish a skill bundle',
        description: [
          'Body: `application/gzip` (tar.gz), `application/zip` (zip or .skill), `multipart/form-data` (one file part per file, the filename being the relative path), or `text/markdown` (a lone SKILL.md).',
          'SKILL.md may sit at the root or inside one top folder.',
          'Version: `?version=`, else frontmatter `metadata.version`, else the next patch.',
          'Identical content answers 200 with the existing version; different content under an existing version is a 409.',
        ].join(' '),
        operationId: operation('publishSkill'),
        ...(prefixed ? { params: namespaceParam } : {}),
        querystring: z.object({
          ...namespaceQuery,
          version: z.string().max(256).optional().describe('Semver version to publish as'),
          tag: z.string().max(64).optional().describe('Dist-tag to point at the published version'),
          name: z.string().max(200).optional().describe('Skill name when the frontmatter has none'),
        }),
        response: {
          200: publishResultSchema.describe('Identical content already published: nothing was created'),
          201: publishResultSchema.describe('A new version was created'),
          ...problemResponses(400, 401, 403, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const { version, tag, name } = request.query;
      const namespace = requestNamespace(request);
      if (tag !== undefined) checkTagName(tag);
      const upload: Upload = request.isMultipart()
        ? { kind: 'files', files: (await readMultipartUpload(request, limits)).files }
        : uploadOf(request, request.body);
      const result = await writes.publishUpload(upload, {
        nameOverride: name,
        version,
        tag,
        actor: request.principal!.actor,
        publisher: request.principal!.publisher,
        namespace,
        readable: readableNamespaces(request),
      });
      request.log.info(
        {
          namespace,
          skill: result.name,
          version: result.version,
          digest: result.digest,
          created: result.created,
        },
        result.created ? 'published' : 'publish unchanged',
      );
      const release = result.scan?.release;
      if (result.created && release?.by === 'rule') {
        // A security event: findings that block were let through on an earlier release.
        request.log.warn(
          {
            event: 'release-by-rule',
            namespace,
            skill: result.name,
            version: result.version,
            releasedVersion: release.version,
            releasedBy: release.actor,
            rules: [...new Set(result.scan.findings.map((finding) => finding.rule))],
          },
          'published with blocking findings an admin released for an earlier version',
        );
      }
      reply.header(
        'location',
        `${scopePath({ kind: 'namespace', namespace })}/skills/${result.name}?version=${encodeURIComponent(result.version)}`,
      );
      return reply.code(result.created ? 201 : 200).send(result);
    },
  );

  app.put(
    '/skills/:name/tags/:tag',
    {
      preHandler: app.authorize('publish', inNamespace),
      schema: {
        tags: ['versions'],
        summary: 'Move a dist-tag',
        description:
          'Points a dist-tag (latest, stable, beta...) at a version. Moving latest by hand pins it until moved again.',
        operationId: operation('setDistTag'),
        params: where.extend(nameParam.shape).extend({ tag: z.string().min(1).max(64) }),
        querystring: z.object(namespaceQuery),
        body: tagMoveBodySchema,
        response: {
          200: tagMoveResultSchema,
          ...problemResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const { name, tag } = request.params;
      checkTagName(tag);
      const { previous } = await writes.moveTag(
        name,
        tag,
        request.body.version,
        request.principal!.actor,
        requestNamespace(request),
      );
      return { name, tag, version: request.body.version, previous };
    },
  );

  app.delete(
    '/skills/:name/versions/:version',
    {
      preHandler: app.authorize('publish', inNamespace),
      schema: {
        tags: ['versions'],
        summary: 'Yank a version',
        description:
          'Hides the version from the catalogue and from latest and removes the dist-tags on it; it stays readable by exact version so pinned users keep working.',
        operationId: operation('yankVersion'),
        params: where.extend(nameParam.shape).extend({ version: withoutNul(z.string().min(1).max(256)) }),
        querystring: z.object(namespaceQuery),
        response: {
          200: yankResultSchema,
          ...problemResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { name, version } = request.params;
      const result = await writes.yank(name, version, request.principal!.actor, requestNamespace(request));
      return { name, version, yanked: true as const, ...result };
    },
  );

  app.post(
    '/skills/:name/versions/:version/review',
    {
      preHandler: app.authorize('admin', inNamespace),
      schema: {
        tags: ['versions'],
        summary: 'Review a version in quarantine',
        description:
          '`release` makes a version the security scan blocked servable (latest follows the usual rules); `reject` keeps it stored and unserved for good (listed by `GET /quarantine?state=rejected`). Audited with the reason.',
        operationId: operation('reviewVersion'),
        params: where.extend(nameParam.shape).extend({ version: withoutNul(z.string().min(1).max(256)) }),
        querystring: z.object(namespaceQuery),
        body: reviewBodySchema,
        response: {
          200: reviewResultSchema,
          ...problemResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const { name, version } = request.params;
      const { decision, reason } = request.body;
      const result = await writes.review(
        name,
        version,
        decision,
        reason,
        request.principal!.actor,
        requestNamespace(request),
      );
      return {
        name,
        version,
        decision,
        quarantine: result.quarantine as 'rejected' | null,
        latest: result.latest,
      };
    },
  );
};

export default skillsWriteRoutes;
