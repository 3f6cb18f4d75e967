import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { blobs, distTags, skills, skillVersions, versionArchives, versionFiles } from '../db/schema.js';
import { DEFAULT_NAMESPACE } from '../namespaces.js';
import { storeBlobs } from './blobs.js';
import { type ArchiveFormat, LATEST } from './records.js';

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
    format: ArchiveFormat,
  ): Promise<{ bytes: Uint8Array; sha256: string } | undefined> {
    const [row] = await this.db
      .select({ content: blobs.content, digest: blobs.digest })
      .from(versionArchives)
      .innerJoin(blobs, eq(blobs.digest, versionArchives.blobDigest))
      .where(and(eq(versionArchives.versionId, versionId), eq(versionArchives.format, format)));
    return row ? { bytes: row.content, sha256: row.digest } : undefined;
  }

  /** The sha256 of each given version's stored archive in `format`, for those that have one. */
  async storedDigests(versionIds: readonly string[], format: ArchiveFormat): Promise<Map<string, string>> {
    if (versionIds.length === 0) return new Map();
    const rows = await this.db
      .select({ versionId: versionArchives.versionId, digest: versionArchives.blobDigest })
      .from(versionArchives)
      .where(and(inArray(versionArchives.versionId, [...versionIds]), eq(versionArchives.format, format)));
    return new Map(rows.map((row) => [row.versionId, row.digest]));
  }

  /** Stores built archives and links them to their versions; an archive already stored stays. */
  async store(built: readonly ArchiveToStore[], format: ArchiveFormat): Promise<void> {
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
          built.map((archive) => ({ versionId: archive.versionId, format, blobDigest: archive.sha256 })),
        )
        .onConflictDoNothing();
    });
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

  /** Current versions without a stored archive in `format` (what a backfill builds); cheap when none. */
  async missing(format: ArchiveFormat): Promise<Pick<CurrentArchive, 'versionId' | 'totalSize'>[]> {
    return this.db
      .select({ versionId: skillVersions.id, totalSize: skillVersions.totalSize })
      .from(distTags)
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .leftJoin(
        versionArchives,
        and(eq(versionArchives.versionId, skillVersions.id), eq(versionArchives.format, format)),
      )
      .where(
        and(eq(distTags.tag, LATEST), isNull(skillVersions.yankedAt), isNull(versionArchives.versionId)),
      );
  }

  /**
   * Every current skill (its `latest` version, never yanked) with the sha256 of its stored archive in
   * `format`, or null when that archive has not been built yet. Bodies are not loaded: this backs the
   * discovery index, which must stay cheap however many skills there are.
   */
  async current(format: ArchiveFormat, namespace: string = DEFAULT_NAMESPACE): Promise<CurrentArchive[]> {
    return this.db
      .select({
        versionId: skillVersions.id,
        name: skills.name,
        description: skillVersions.description,
        version: skillVersions.version,
        totalSize: skillVersions.totalSize,
        archiveSha256: versionArchives.blobDigest,
      })
      .from(distTags)
      .innerJoin(skills, eq(skills.id, distTags.skillId))
      .innerJoin(skillVersions, eq(skillVersions.id, distTags.versionId))
      .leftJoin(
        versionArchives,
        and(eq(versionArchives.versionId, skillVersions.id), eq(versionArchives.format, format)),
      )
      .where(and(eq(distTags.tag, LATEST), eq(skills.namespace, namespace), isNull(skillVersions.yankedAt)))
      .orderBy(skills.name);
  }
}
