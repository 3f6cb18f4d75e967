import { z } from 'zod';
import { jsonBody } from '../cache/bodies.js';
import { revisionEtag } from '../cache/etags.js';
import type { ReadCache } from '../cache/read-cache.js';
import { layersOf, type Scope, scopeKey, scopePath } from '../namespaces.js';
import type { CurrentArchive } from '../storage/archives-repository.js';
import { type ArchiveFormat, archiveKey } from '../storage/records.js';
import { type Answer, bodyOf, JSON_CONTENT_TYPE } from './answers.js';
import { type ArchiveService, PUBLISH_ARCHIVE_FORMAT } from './archives.js';
import type { BundleService } from './bundles.js';
import type { SkillReadService } from './skill-reads.js';

export const DISCOVERY_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json' as const;

/**
 * The archive format the index points at. The `skills` CLI (npm `skills`) reads both, but its tar
 * reader knows only the ustar name/prefix fields: a path that needs a PAX header (non-ASCII, or too
 * long to split) would install under a truncated name. Its zip reader takes UTF-8 names of any length,
 * so zip is the format that installs every publishable bundle file for file. Every publish builds and
 * stores this archive with the version, so the index finds them built; only versions published before
 * that (a migrated or bulk-loaded catalogue) are built here, once.
 */
export const INDEX_ARCHIVE_FORMAT: ArchiveFormat = PUBLISH_ARCHIVE_FORMAT;

/**
 * The index links installable archives (the bundle route's default contents): the `skills` CLI
 * refuses a SKILL.md without name and description in its frontmatter, so a skill published with
 * fallbacks is handed one with them written in.
 */
const INDEX_ARCHIVE_KEY = archiveKey(INDEX_ARCHIVE_FORMAT, 'installable');

const entrySchema = z.object({
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
});

export const discoveryIndexSchema = z
  .object({
    $schema: z.literal(DISCOVERY_SCHEMA),
    skills: z.array(entrySchema),
  })
  .describe('Agent Skills discovery index 0.2.0');

type IndexEntry = z.infer<typeof entrySchema>;

/** The version-pinned bundle URL: an exact version is immutable, so the digest next to it stays true. */
export function bundleUrl(base: string, name: string, version: string): string {
  return `${base}/skills/${encodeURIComponent(name)}/bundle?version=${encodeURIComponent(version)}&format=${encodeURIComponent(INDEX_ARCHIVE_FORMAT)}`;
}

/**
 * One entry. Its url is the bundle's in the namespace the skill is in (an exact version there is
 * immutable, so the digest next to it stays true whatever a view's layers become).
 */
function toEntry(
  origin: string,
  namespace: string,
  entry: Pick<CurrentArchive, 'name' | 'description' | 'version'>,
  sha256: string,
  inView: boolean,
): IndexEntry {
  return {
    name: entry.name,
    description: entry.description,
    version: entry.version,
    type: 'archive',
    url: bundleUrl(`${origin}${scopePath({ kind: 'namespace', namespace })}`, entry.name, entry.version),
    digest: `sha256:${sha256}`,
    ...(inView ? { namespace } : {}),
  };
}

/** The Agent Skills discovery index (`.well-known/agent-skills/index.json`), whole or for one skill. */
export class DiscoveryService {
  /**
   * Straggler builds of this process, one after another: concurrent index requests (another origin,
   * the next revision) queue behind the running build instead of building the same archives again,
   * and the build itself goes in bounded batches that yield between them (ArchiveService.buildMissing),
   * so a catalogue of thousands of stragglers never takes every connection or the event loop.
   */
  private building: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cache: ReadCache,
    private readonly archives: ArchiveService,
    private readonly reads: SkillReadService,
    private readonly bundles: BundleService,
    private readonly log?: { info(details: object, message: string): void },
  ) {}

  /**
   * Every current skill of a scope (its `latest` version; yanked versions never appear; in a view the
   * layer each name resolves to), links under `origin` (the registry's base URL).
   */
  async index(scope: Scope, origin: string): Promise<Answer> {
    const revision = await this.cache.scopeRevision(scope);
    const where = scopeKey(scope);
    return {
      etag: revisionEtag(revision, 'agent-skills-index', where, origin, INDEX_ARCHIVE_KEY),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      validity: { kind: 'scope', scope, revision },
      body: async () => {
        const body = await this.cache.catalogueWide(
          `agent-skills-index|${where}|${origin}`,
          revision,
          async () => {
            const layers = layersOf(scope);
            const perLayer = await Promise.all(
              layers.map((namespace) => this.archives.currentInstallable(INDEX_ARCHIVE_FORMAT, namespace)),
            );
            const winners = new Map<string, { entry: CurrentArchive; namespace: string }>();
            perLayer.forEach((current, at) => {
              for (const entry of current) winners.set(entry.name, { entry, namespace: layers[at]! });
            });
            const current = [...winners.values()].sort((a, b) =>
              a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0,
            );
            const digests = await this.withDigests(current.map(({ entry }) => entry));
            const inView = scope.kind === 'view';
            return jsonBody(discoveryIndexSchema, {
              $schema: DISCOVERY_SCHEMA,
              skills: current.map(({ entry, namespace }) =>
                toEntry(origin, namespace, entry, digests.get(entry.versionId)!, inView),
              ),
            });
          },
          true,
        );
        return { payload: body };
      },
    };
  }

  /** The index restricted to one skill's latest version in a scope. */
  async skillIndex(scope: Scope, name: string, origin: string): Promise<Answer> {
    const { record, revision, namespace } = await this.reads.resolve(scope, name, {});
    const inView = scope.kind === 'view';
    const body = await this.cache.immutable(
      `agent-skills-index|${record.id}|${origin}|${inView}`,
      async () => {
        const archive = await this.bundles.archive(record, INDEX_ARCHIVE_FORMAT, 'installable');
        return jsonBody(discoveryIndexSchema, {
          $schema: DISCOVERY_SCHEMA,
          skills: [toEntry(origin, namespace, record, archive.sha256, inView)],
        });
      },
      true,
    );
    return {
      etag: revisionEtag(
        revision,
        'agent-skills-index',
        scopeKey(scope),
        origin,
        INDEX_ARCHIVE_KEY,
        record.name,
      ),
      immutable: false,
      contentType: JSON_CONTENT_TYPE,
      body: bodyOf(body),
    };
  }

  /** Digests of the archives, building (and storing, once per version) those not built yet. */
  private async withDigests(current: CurrentArchive[]): Promise<Map<string, string>> {
    const digests = new Map<string, string>();
    const missing: CurrentArchive[] = [];
    for (const entry of current) {
      if (entry.archiveSha256) digests.set(entry.versionId, entry.archiveSha256);
      else missing.push(entry);
    }
    if (missing.length === 0) return digests;
    const started = Date.now();
    const build = this.building.then(() =>
      this.archives.buildMissing(missing, INDEX_ARCHIVE_FORMAT, 'installable'),
    );
    this.building = build.catch(() => {});
    for (const [versionId, sha256] of await build) digests.set(versionId, sha256);
    this.log?.info(
      { built: missing.length, ms: Date.now() - started },
      'discovery index: built the archives of versions published before archives were built at publish',
    );
    return digests;
  }
}
