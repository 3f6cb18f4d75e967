import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  type ArchiveFormat,
  type CurrentArchive,
  PUBLISH_ARCHIVE_FORMAT,
} from '../../storage/skills-repository.js';
import { jsonBody, REVALIDATE, replyNotModified, revisionEtag, sendJson } from '../caching.js';
import { problemResponses } from '../problem.js';
import { nameParam } from '../schemas.js';

export const DISCOVERY_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json' as const;

/**
 * The archive format the index points at. The `skills` CLI (npm `skills`) reads both, but its tar
 * reader knows only the ustar name/prefix fields: a path that needs a PAX header (non-ASCII, or too
 * long to split) would install under a truncated name. Its zip reader takes UTF-8 names of any length,
 * so zip is the format that installs every publishable bundle file for file. Every publish builds and
 * stores this archive with the version (PUBLISH_ARCHIVE_FORMAT in skills-repository.ts), so the index
 * finds them built; only versions published before that (a migrated or bulk-loaded catalogue) are
 * built here, once.
 */
export const INDEX_ARCHIVE_FORMAT: ArchiveFormat = PUBLISH_ARCHIVE_FORMAT;

const entrySchema = z.object({
  name: z.string(),
  description: z.string(),
  type: z.literal('archive'),
  url: z.string().describe('Absolute URL of the version-pinned bundle (immutable)'),
  digest: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .describe('sha256 of the exact bytes served at url'),
});

const indexSchema = z
  .object({
    $schema: z.literal(DISCOVERY_SCHEMA),
    skills: z.array(entrySchema),
  })
  .describe('Agent Skills discovery index 0.2.0');

type IndexEntry = z.infer<typeof entrySchema>;

/** Base of every absolute link: SKILLREG_PUBLIC_URL, else the origin the client used. */
export function publicBase(publicUrl: string | undefined, request: FastifyRequest): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

/** The version-pinned bundle URL: an exact version is immutable, so the digest next to it stays true. */
export function bundleUrl(base: string, name: string, version: string): string {
  return `${base}/skills/${encodeURIComponent(name)}/bundle?version=${encodeURIComponent(version)}&format=${encodeURIComponent(INDEX_ARCHIVE_FORMAT)}`;
}

const wellKnownRoutes: FastifyPluginAsyncZod = async (app) => {
  const { skills } = app.repositories;
  const cache = app.readCache;
  const readable = app.authorize('read');

  /**
   * Straggler builds of this process, one after another: concurrent index requests (another origin,
   * the next revision) queue behind the running build instead of building the same archives again,
   * and the build itself goes in bounded batches that yield between them (buildArchives), so a
   * catalogue of thousands of stragglers never takes every connection or the event loop.
   */
  let building: Promise<unknown> = Promise.resolve();

  /** Digests of the archives, building (and storing, once per version) those not built yet. */
  async function withDigests(current: CurrentArchive[]): Promise<Map<string, string>> {
    const digests = new Map<string, string>();
    const missing: CurrentArchive[] = [];
    for (const entry of current) {
      if (entry.archiveSha256) digests.set(entry.versionId, entry.archiveSha256);
      else missing.push(entry);
    }
    if (missing.length === 0) return digests;
    const started = Date.now();
    const build = building.then(() => skills.buildArchives(missing, INDEX_ARCHIVE_FORMAT));
    building = build.catch(() => {});
    for (const [versionId, sha256] of await build) digests.set(versionId, sha256);
    app.log.info(
      { built: missing.length, ms: Date.now() - started },
      'discovery index: built the archives of versions published before archives were built at publish',
    );
    return digests;
  }

  function toEntry(base: string, entry: CurrentArchive, sha256: string): IndexEntry {
    return {
      name: entry.name,
      description: entry.description,
      type: 'archive',
      url: bundleUrl(base, entry.name, entry.version),
      digest: `sha256:${sha256}`,
    };
  }

  app.get(
    '/.well-known/agent-skills/index.json',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'Agent Skills discovery index',
        description: `Every current skill (its \`latest\` version; yanked versions never appear) as an archive entry of the [discovery index 0.2.0](${DISCOVERY_SCHEMA}), so \`npx skills add <registry-url>\` can install from this registry. Each \`url\` is the absolute, version-pinned ${INDEX_ARCHIVE_FORMAT} bundle (files at the archive root) and \`digest\` is the sha256 of exactly the bytes served there. Links use SKILLREG_PUBLIC_URL when set, else the request origin.`,
        operationId: 'getAgentSkillsIndex',
        response: { 200: indexSchema, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const base = publicBase(app.config.publicUrl, request);
      const revision = await cache.revision();
      const etag = revisionEtag(revision, 'agent-skills-index', base, INDEX_ARCHIVE_FORMAT);
      if (replyNotModified(request, reply, etag, REVALIDATE)) return reply;
      const body = await cache.catalogueWide(
        `agent-skills-index|${base}`,
        revision,
        async () => {
          const current = await skills.currentArchives(INDEX_ARCHIVE_FORMAT);
          const digests = await withDigests(current);
          return jsonBody(indexSchema, {
            $schema: DISCOVERY_SCHEMA,
            skills: current.map((entry) => toEntry(base, entry, digests.get(entry.versionId)!)),
          });
        },
        true,
      );
      return sendJson(reply, body);
    },
  );

  app.get(
    '/skills/:name/.well-known/agent-skills/index.json',
    {
      preHandler: readable,
      schema: {
        tags: ['skills'],
        summary: 'Discovery index of one skill',
        description:
          'The discovery index restricted to one skill, for installers that look for an index under the URL they are given: `npx skills add <registry-url>/skills/<name>` then downloads only that skill, where `npx skills add <registry-url>` downloads every listed archive before picking.',
        operationId: 'getSkillAgentSkillsIndex',
        params: nameParam,
        response: { 200: indexSchema, ...problemResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const base = publicBase(app.config.publicUrl, request);
      const revision = await cache.revision();
      const record = await cache.resolve(request.params.name, {}, revision);
      const etag = revisionEtag(revision, 'agent-skills-index', base, INDEX_ARCHIVE_FORMAT, record.name);
      if (replyNotModified(request, reply, etag, REVALIDATE)) return reply;
      const body = await cache.immutable(
        `agent-skills-index|${record.id}|${base}`,
        async () => {
          const archive = await skills.archive(record, INDEX_ARCHIVE_FORMAT);
          const entry = { ...record, versionId: record.id, archiveSha256: archive.sha256 };
          return jsonBody(indexSchema, {
            $schema: DISCOVERY_SCHEMA,
            skills: [toEntry(base, entry, archive.sha256)],
          });
        },
        true,
      );
      return sendJson(reply, body);
    },
  );
};

export default wellKnownRoutes;
