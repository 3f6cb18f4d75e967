import type { z } from 'zod';
import { type Scope, scopePath } from '../domain/scope.js';
import { jsonBody } from '../render/response-bodies.js';
import type { CurrentArchive } from '../storage/archives-repository.js';
import { type ArchiveFormat, archiveKey } from '../storage/records.js';
import { DISCOVERY_SCHEMA, type discoveryEntrySchema, discoveryIndexSchema } from '../wire/index.js';
import { type Answer, JSON_CONTENT_TYPE } from './answers.js';
import { type ArchiveService, PUBLISH_ARCHIVE_FORMAT } from './archives.js';
import type { BundleService } from './bundles.js';
import type { ListedSkill } from './listing.js';
import type { SkillReadService } from './skill-reads.js';

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

type IndexEntry = z.infer<typeof discoveryEntrySchema>;

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
  entry: Pick<ListedSkill, 'name' | 'description' | 'version'>,
  sha256: string,
  computedHash: string,
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
    computedHash,
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
    const read = await this.reads.cached.of({
      read: 'agent-skills-index',
      on: { kind: 'scope', scope },
      shape: [origin, INDEX_ARCHIVE_KEY],
    });
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      render: async () => {
        const current = await this.currentArchives(scope);
        const digests = await this.withDigests(current);
        const installed = await this.reads.installed.identities(current.map((entry) => entry.versionId));
        const inView = scope.kind === 'view';
        return jsonBody(discoveryIndexSchema, {
          $schema: DISCOVERY_SCHEMA,
          skills: current.map((entry) =>
            toEntry(
              origin,
              entry.namespace,
              entry,
              digests.get(entry.versionId)!,
              installed.get(entry.versionId)!.computedHash,
              inView,
            ),
          ),
        });
      },
    });
  }

  /** The index restricted to one skill's latest version in a scope. */
  async skillIndex(scope: Scope, name: string, origin: string): Promise<Answer> {
    // Pinned before resolving: a write in between leaves a newer entry under an older revision, never
    // the reverse.
    const read = await this.reads.cached.of({
      read: 'agent-skills-index',
      on: { kind: 'scope', scope },
      shape: [origin, INDEX_ARCHIVE_KEY, name],
    });
    const { record, namespace } = await this.reads.resolve(scope, name, {});
    const inView = scope.kind === 'view';
    return read.answer({
      contentType: JSON_CONTENT_TYPE,
      unrepeatable: true,
      render: async () => {
        const archive = await this.bundles.archive(record, INDEX_ARCHIVE_FORMAT, 'installable');
        return jsonBody(discoveryIndexSchema, {
          $schema: DISCOVERY_SCHEMA,
          skills: [
            toEntry(
              origin,
              namespace,
              record,
              archive.sha256,
              record.computedHash ?? (await this.reads.installed.identity(record.id)).computedHash,
              inView,
            ),
          ],
        });
      },
    });
  }

  /**
   * Every skill the index lists, by name (code point order, whatever the database's collation), with
   * the sha256 of its stored installable archive, or null before it is built. What is current and
   * which layer of a view wins a name is the listing's to say.
   */
  async currentArchives(scope: Scope): Promise<(CurrentArchive & { namespace: string })[]> {
    const listed = (await this.reads.listing.all(scope)).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const stored = new Map<string, string>();
    for (let start = 0; start < listed.length; start += 2000) {
      const ids = listed.slice(start, start + 2000).map((item) => item.versionId);
      for (const [id, sha256] of await this.archives.storedDigests(
        ids,
        INDEX_ARCHIVE_FORMAT,
        'installable',
      )) {
        stored.set(id, sha256);
      }
    }
    return listed.map((item) => ({
      versionId: item.versionId,
      name: item.name,
      description: item.description,
      version: item.version,
      totalSize: item.totalSize,
      archiveSha256: stored.get(item.versionId) ?? null,
      namespace: item.namespace ?? (scope.kind === 'namespace' ? scope.namespace : ''),
    }));
  }

  /** Digests of the archives, building (and storing, once per version) those not built yet. */
  private async withDigests(current: readonly CurrentArchive[]): Promise<Map<string, string>> {
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
