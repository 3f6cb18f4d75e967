import { and, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { blobs, distTags, skills, skillVersions, versionArchives, versionFiles } from '../db/schema.js';
import { storeBlobs } from './blobs.js';
import { type ArchiveKey, LATEST } from './records.js';

/** A current version as the discovery index lists it. */
export interface CurrentArchive {
  versionId: string;
  name: string;
  description: string;
  version: string;
  /** Bytes of the version's files, uncompressed: what building its archive holds in memory. */
  totalSize: number;
  /** Hex sha256 of the stored archive; null until the archive is first built. */
  archiveSha256: string | null;
}

/** A version whose archive is to be built: what building it needs to know. */
export type ArchiveToBuild = Pick<CurrentArchive, 'versionId' | 'name' | 'description' | 'totalSize'>;

/** A built archive of a version, to store: its bytes are kept as a blob under `sha256`. */
export interface ArchiveToStore {
  versionId: string;
  bytes: Uint8Array;
  sha256: string;
}

/** Archives stored with versions: every replica serves the same bytes, so the index digests stay true. */
export class ArchivesRepository {
  constructor(private readonly db: Db) {}

  async stored(
    versionId: string,
    key: ArchiveKey,
  ): Promise<{ bytes: Uint8Array; sha256: string } | undefined> {
    const [row] = await this.db
      .select({ content: blobs.content, digest: blobs.digest })
      .from(versionArchives)
      .innerJoin(blobs, eq(blobs.digest, versionArchives.blobDigest))
      .where(and(eq(versionArchives.versionId, versionId), eq(versionArchives.format, key)));
    return row ? { bytes: row.content, sha256: row.digest } : undefined;
  }

  /** The sha256 of each given version's stored archive under `key`, for those that have one. */
  async storedDigests(versionIds: readonly string[], key: ArchiveKey): Promise<Map<string, string>> {
    if (versionIds.length === 0) return new Map();
    const rows = await this.db
      .select({ versionId: versionArchives.versionId, digest: versionArchives.blobDigest })
      .from(versionArchives)
      .where(and(inArray(versionArchives.versionId, [...versionIds]), eq(versionArchives.format, key)));
    return new Map(rows.map((row) => [row.versionId, row.digest]));
  }

  /** Stores built archives and links them to their versions; an archive already stored stays. */
  async store(built: readonly ArchiveToStore[], key: ArchiveKey): Promise<void> {
    if (built.length === 0) return;
    await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      await storeBlobs(
        db,
        built.map((archive) => ({ bytes: archive.bytes, digest: archive.sha256 })),
      );
      await db
        .insert(versionArchives)
        .values(
          built.map((archive) => ({ versionId: archive.versionId, format: key, blobDigest: archive.sha256 })),
        )
        .onConflictDoNothing();
    });
  }

  /**
   * Links versions to archives already stored as blobs (another kind of archive of the same version
   * with the very same bytes); a link already there stays.
   */
  async link(links: readonly { versionId: string; sha256: string }[], key: ArchiveKey): Promise<void> {
    if (links.length === 0) return;
    await this.db
      .insert(versionArchives)
      .values(links.map((entry) => ({ versionId: entry.versionId, format: key, blobDigest: entry.sha256 })))
      .onConflictDoNothing();
  }

  /** The SKILL.md bytes of each given version, in one query (whether installers need it completed). */
  async skillMdOf(versionIds: readonly string[]): Promise<Map<string, Uint8Array>> {
    if (versionIds.length === 0) return new Map();
    const rows = await this.db
      .select({ versionId: versionFiles.versionId, content: blobs.content })
      .from(versionFiles)
      .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
      .where(and(inArray(versionFiles.versionId, [...versionIds]), eq(versionFiles.path, 'SKILL.md')));
    return new Map(rows.map((row) => [row.versionId, row.content]));
  }

  /** Every file (path, mode, bytes) of the given versions, for building their archives in one query. */
  async filesOf(
    versionIds: readonly string[],
  ): Promise<{ versionId: string; path: string; mode: number; bytes: Uint8Array }[]> {
    if (versionIds.length === 0) return [];
    const rows = await this.db
      .select({
        versionId: versionFiles.versionId,
        path: versionFiles.path,
        mode: versionFiles.mode,
        content: blobs.content,
      })
      .from(versionFiles)
      .innerJoin(blobs, eq(blobs.digest, versionFiles.blobDigest))
      .where(inArray(versionFiles.versionId, [...versionIds]));
    return rows.map((row) => ({
      versionId: row.versionId,
      path: row.path,
      mode: row.mode,
      bytes: row.content,
    }));
  }

  /**
   * Current versions without a stored archive under `key` (what a backfill builds); with
   * `changedAfter`, only those of skills written after that catalogue revision.
   */
  async missing(key: ArchiveKey, changedAfter?: number): Promise<ArchiveToBuild[]> {
    const changed =
      changedAfter === undefined
        ? undefined
        : inArray(
            distTags.skillId,
            this.db.select({ id: skills.id }).from(skills).where(gt(skills.changedRevision, changedAfter)),
          );
    return (
      this.db
        .select({
          versionId: skillVersions.id,
          name: skillVersions.name,
          description: skillVersions.description,
          totalSize: skillVersions.totalSize,
        })
        .from(distTags)
        .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
        // A lookup per version by the primary key, not an anti-join: the planner's statistics lag a
        // backfill, and when they still said no archive of `key` existed (one stopped part-way), the
        // anti-join compared every version with every archive (a 100,000-skill catalogue: minutes).
        .leftJoin(
          sql`lateral (select 1 as found from ${versionArchives} where ${versionArchives.versionId} = ${skillVersions.id} and ${versionArchives.format} = ${key} limit 1) as archived`,
          sql`true`,
        )
        .where(
          and(eq(distTags.tag, LATEST), isNull(skillVersions.yankedAt), sql`archived.found is null`, changed),
        )
    );
  }
}
