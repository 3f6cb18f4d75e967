import { type SQL, sql } from 'drizzle-orm';
import { registryState, skillVersions } from '../db/schema.js';

/**
 * What the repositories hand back: stored rows in the shapes services work with. Nothing here
 * decides anything; the rules that produce and read these rows live in src/services.
 */

/** The dist-tag every read selects by default, and the one `latest` rules maintain. */
export const LATEST = 'latest';

export type ArchiveFormat = 'tar.gz' | 'zip';

/**
 * What a served archive holds: every file as published (what the version's digest and signature
 * cover), or the same files with SKILL.md as installers and hosts are handed it (src/bundle/installable-skill-md.ts).
 */
export type ArchiveContents = 'installable' | 'as-published';

/**
 * The shape of a stored archive: zip holds the files at its root (installers read SKILL.md there);
 * tar.gz holds them inside a folder named after the skill, so `tar -xzf` makes that one folder.
 * tar.gz archives stored before that held the files at the root under the key `tar.gz`: the new key
 * leaves them unread (the new shape is built on first request) and gives the new bytes new ETags.
 */
type ArchiveLayout = 'zip' | 'tar.gz+folder';

/** How an archive is stored (version_archives.format): its layout, prefixed for installable contents. */
export type ArchiveKey = ArchiveLayout | `installable.${ArchiveLayout}`;

export function archiveKey(format: ArchiveFormat, contents: ArchiveContents): ArchiveKey {
  const layout = format === 'tar.gz' ? 'tar.gz+folder' : 'zip';
  return contents === 'installable' ? `installable.${layout}` : layout;
}

/** How a read names the version it wants: an exact version, a dist-tag, or neither (latest). */
export interface VersionSelector {
  version?: string;
  tag?: string;
}

/** One stored version, as reads need it. */
export interface VersionRecord {
  id: string;
  skillId: string;
  name: string;
  version: string;
  digest: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  createdAt: Date;
  yankedAt: Date | null;
  tokensDescription: number;
  tokensBody: number;
  totalSize: number;
  fileCount: number;
  /** The publish-time scan; null for versions stored before scanning. */
  scan: { verdict: string; rules: string; findings: unknown[] } | null;
  /** `held` or `rejected` while quarantined (never served); null for a servable version. */
  quarantine: string | null;
  /** The skills-lock hash of the installed folder; null until computed for versions stored before it. */
  computedHash: string | null;
  /** The version's git commit (src/git/version-commit.ts); null likewise. */
  gitCommit: string | null;
}

export const versionColumns = {
  id: skillVersions.id,
  skillId: skillVersions.skillId,
  name: skillVersions.name,
  version: skillVersions.version,
  digest: skillVersions.digest,
  description: skillVersions.description,
  frontmatter: skillVersions.frontmatter,
  body: skillVersions.body,
  createdAt: skillVersions.createdAt,
  yankedAt: skillVersions.yankedAt,
  tokensDescription: skillVersions.tokensDescription,
  tokensBody: skillVersions.tokensBody,
  totalSize: skillVersions.totalSize,
  fileCount: skillVersions.fileCount,
  scan: skillVersions.scan,
  quarantine: skillVersions.quarantine,
  computedHash: skillVersions.computedHash,
  gitCommit: skillVersions.gitCommit,
};

export interface FileEntry {
  path: string;
  size: number;
  /** Hex sha256 of the file's bytes (the blob key). */
  digest: string;
  mode: number;
}

/** A version row as version listings and publish rules read it. */
export interface VersionRow {
  id: string;
  version: string;
  digest: string;
  createdAt: Date;
  yankedAt: Date | null;
  /** `held` or `rejected` while quarantined; null for a servable version. */
  quarantine: string | null;
}

/** The catalogue and loads revisions a read reflects. */
export interface StateRevisions {
  revision: number;
  loadsRevision: number;
}

/** A committed write that changed what readers see: the revision it produced and the skill it changed. */
export interface CatalogueChange {
  revision: number;
  skill?: string;
}

/** A version's stored prompt entry counts (see render/prompt.ts promptEntryTokens). */
export interface StoredPromptTokens {
  xml: number;
  markdown: number;
  listed: number;
}

/**
 * Empties a large result's row array once it has been read. node-postgres can keep the result of
 * the query that opened a pooled connection reachable for as long as the connection lives (a closure
 * of the connection's event handlers shares a scope with that query's promise).
 */
export function releaseRows(rows: unknown[]): void {
  rows.length = 0;
}

/**
 * `rows` with the catalogue revision and the loads revision read in the same snapshot, as
 * `state_revision` and `state_loads_revision` (text) on every row, and in one row of nulls when `rows`
 * finds nothing: what a caller compares with the revisions it holds.
 */
export function withStateRevision(rows: SQL): SQL {
  return sql`
    with state as (
      select ${registryState.revision} as revision, ${registryState.loadsRevision} as loads_revision
      from ${registryState} where ${registryState.id} = 1
    )
    select state.revision::text as state_revision, state.loads_revision::text as state_loads_revision, e.*
    from state left join lateral (${rows}) e on true`;
}
