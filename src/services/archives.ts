import { writeTarGz, writeZip } from '../bundle/archive-write.js';
import { fileDigest } from '../bundle/digest.js';
import type { BundleFile } from '../bundle/types.js';
import type { ArchivesRepository, CurrentArchive } from '../storage/archives-repository.js';
import type { ArchiveFormat } from '../storage/records.js';
import type { SkillReads } from '../storage/skills-repository.js';

/**
 * The archive every publish builds and stores with the version, in the same transaction: the format
 * the discovery index points at (see discovery.ts), so the index never builds archives except for
 * versions published before archives were built at publish time. tar.gz bundles stay lazy.
 */
export const PUBLISH_ARCHIVE_FORMAT: ArchiveFormat = 'zip';

/** Stragglers built per batch: at most this many versions, and this many bytes of files loaded at once. */
const ARCHIVE_BATCH_VERSIONS = 100;
const ARCHIVE_BATCH_BYTES = 16 * 1024 * 1024;

export interface BuiltArchive {
  format: ArchiveFormat;
  bytes: Uint8Array;
  /** Hex sha256 of the bytes: the blob digest, and what the discovery index lists. */
  sha256: string;
}

/** The deterministic archive of a version's files (the same bytes whether built at publish or later). */
export async function buildArchive(
  files: readonly BundleFile[],
  format: ArchiveFormat,
): Promise<BuiltArchive> {
  const bytes = format === 'zip' ? await writeZip(files) : await writeTarGz(files);
  return { format, bytes, sha256: fileDigest(bytes) };
}

/** Splits versions into batches of at most ARCHIVE_BATCH_VERSIONS and about ARCHIVE_BATCH_BYTES. */
function archiveBatches<T extends { totalSize: number }>(versions: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const version of versions) {
    if (
      current.length > 0 &&
      (current.length >= ARCHIVE_BATCH_VERSIONS || bytes + version.totalSize > ARCHIVE_BATCH_BYTES)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(version);
    bytes += version.totalSize;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Stored archives: built once per version and format, the same bytes on every replica. */
export class ArchiveService {
  constructor(
    private readonly archives: ArchivesRepository,
    private readonly skills: SkillReads,
  ) {}

  /**
   * The archive of a version, built on first request and stored, so every replica serves the same
   * bytes and the digest in the discovery index stays true. Concurrent first requests race harmlessly:
   * the first stored archive wins and everyone answers with it.
   */
  async archive(versionId: string, format: ArchiveFormat): Promise<{ bytes: Uint8Array; sha256: string }> {
    const stored = await this.archives.stored(versionId, format);
    if (stored) return stored;
    const built = await buildArchive(await this.skills.bundleFiles(versionId), format);
    await this.archives.store([{ versionId, bytes: built.bytes, sha256: built.sha256 }], format);
    return (await this.archives.stored(versionId, format)) ?? built;
  }

  /**
   * Builds and stores the missing archives of many versions (the stragglers published before publishes
   * built them) and answers the sha256 of each version's stored archive. Works in bounded batches (at
   * most ARCHIVE_BATCH_VERSIONS versions and about ARCHIVE_BATCH_BYTES of files in memory): one query
   * loads a batch's files, one transaction stores its archives, and the event loop gets a turn between
   * batches, so thousands of stragglers never hold more than one connection or a batch of memory.
   * Versions whose archive exists by then (another request or replica built it) are not built again.
   */
  async buildMissing(
    versions: readonly Pick<CurrentArchive, 'versionId' | 'totalSize'>[],
    format: ArchiveFormat,
  ): Promise<Map<string, string>> {
    const digests = new Map<string, string>();
    for (const batch of archiveBatches(versions)) {
      const ids = batch.map((entry) => entry.versionId);
      const existing = await this.archives.storedDigests(ids, format);
      for (const [id, sha256] of existing) digests.set(id, sha256);
      const todo = ids.filter((id) => !existing.has(id));
      if (todo.length > 0) {
        const filesOf = new Map<string, BundleFile[]>(todo.map((id) => [id, []]));
        for (const row of await this.archives.filesOf(todo)) {
          filesOf.get(row.versionId)?.push({ path: row.path, bytes: row.bytes, mode: row.mode });
        }
        const built = await Promise.all(
          todo.map(async (versionId) => ({
            versionId,
            ...(await buildArchive(filesOf.get(versionId)!, format)),
          })),
        );
        await this.archives.store(built, format);
        // What is stored wins: a concurrent builder may have stored its archive first.
        for (const [id, sha256] of await this.archives.storedDigests(todo, format)) digests.set(id, sha256);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return digests;
  }

  /** Builds the archives current versions lack in `format`; answers how many were built. */
  async backfill(format: ArchiveFormat = PUBLISH_ARCHIVE_FORMAT): Promise<number> {
    const missing = await this.archives.missing(format);
    if (missing.length > 0) await this.buildMissing(missing, format);
    return missing.length;
  }

  /** Current versions with their stored archive digests (see ArchivesRepository.current). */
  current(format: ArchiveFormat, namespace?: string): Promise<CurrentArchive[]> {
    return this.archives.current(format, namespace);
  }
}
