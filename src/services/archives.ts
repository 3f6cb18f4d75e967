import { writeTarGz, writeZip } from '../bundle/archive-write.js';
import { fileDigest } from '../bundle/digest.js';
import { installableFiles, installableSkillMd } from '../bundle/installable-skill-md.js';
import type { BundleFile } from '../bundle/types.js';
import type { ArchivesRepository, ArchiveToBuild } from '../storage/archives-repository.js';
import { type ArchiveContents, type ArchiveFormat, archiveKey } from '../storage/records.js';
import type { SkillReads } from '../storage/skills-repository.js';

/**
 * The format every publish builds and stores with the version, in the same transaction, both as
 * published and installable (one blob when SKILL.md needs no completing): the installable one is what
 * the discovery index points at (see discovery.ts), so the index never builds archives except for
 * versions published before. tar.gz bundles stay lazy.
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

/**
 * The deterministic archive of a version's files (the same bytes whether built at publish or later),
 * laid out as its key says (archiveKey): a tar.gz inside a folder named after the skill (what
 * `tar -xzf` users expect), a zip with the files at its root (what the discovery index's installers
 * read). Either publishes again as the same digest: a single top folder holding SKILL.md is stripped.
 */
export async function buildArchive(
  files: readonly BundleFile[],
  format: ArchiveFormat,
  skillName: string,
): Promise<BuiltArchive> {
  const bytes = format === 'zip' ? await writeZip(files) : await writeTarGz(files, { prefix: skillName });
  return { format, bytes, sha256: fileDigest(bytes) };
}

/** What the archive of a version is built for: its id, and the name and description SKILL.md completes with. */
export interface ArchivedVersion {
  id: string;
  name: string;
  description: string;
}

/**
 * A new version's archives in `format`: as published, and installable (`installable`: its files as
 * installableFiles makes them), which is the same archive unless the registry filled in SKILL.md's
 * name or description.
 */
export async function buildPublishArchives(
  files: readonly BundleFile[],
  name: string,
  installable: { files: BundleFile[]; completed: boolean },
  format: ArchiveFormat = PUBLISH_ARCHIVE_FORMAT,
): Promise<{ asPublished: BuiltArchive; installable: BuiltArchive }> {
  const asPublished = buildArchive(files, format, name);
  return {
    asPublished: await asPublished,
    installable: installable.completed
      ? await buildArchive(installable.files, format, name)
      : await asPublished,
  };
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

/** Stored archives: built once per version, format and contents, the same bytes on every replica. */
export class ArchiveService {
  constructor(
    private readonly archives: ArchivesRepository,
    private readonly skills: SkillReads,
  ) {}

  /**
   * The archive of a version, built on first request and stored, so every replica serves the same
   * bytes and the digest in the discovery index stays true. Concurrent first requests race harmlessly:
   * the first stored archive wins and everyone answers with it. An installable archive whose SKILL.md
   * needs no completing is the as-published one, linked under both keys.
   */
  async archive(
    version: ArchivedVersion,
    format: ArchiveFormat,
    contents: ArchiveContents,
  ): Promise<{ bytes: Uint8Array; sha256: string }> {
    const key = archiveKey(format, contents);
    const stored = await this.archives.stored(version.id, key);
    if (stored) return stored;
    let files: BundleFile[] = await this.skills.bundleFiles(version.id);
    if (contents === 'installable') {
      const installable = installableFiles(files, version.name, version.description);
      if (!installable.completed) {
        const same = await this.archive(version, format, 'as-published');
        await this.archives.link([{ versionId: version.id, sha256: same.sha256 }], key);
        return same;
      }
      files = installable.files;
    }
    const built = await buildArchive(files, format, version.name);
    await this.archives.store([{ versionId: version.id, bytes: built.bytes, sha256: built.sha256 }], key);
    return (await this.archives.stored(version.id, key)) ?? built;
  }

  /**
   * Builds and stores the missing archives of many versions (the stragglers published before publishes
   * built them) and answers the sha256 of each version's stored archive. Works in bounded batches (at
   * most ARCHIVE_BATCH_VERSIONS versions and about ARCHIVE_BATCH_BYTES of files in memory): one query
   * loads a batch's files, one transaction stores its archives, and the event loop gets a turn between
   * batches, so thousands of stragglers never hold more than one connection or a batch of memory.
   * Versions whose archive exists by then (another request or replica built it) are not built again,
   * and an installable archive that is the same as a stored as-published one is only linked to it.
   */
  async buildMissing(
    versions: readonly ArchiveToBuild[],
    format: ArchiveFormat,
    contents: ArchiveContents,
  ): Promise<Map<string, string>> {
    const key = archiveKey(format, contents);
    const digests = new Map<string, string>();
    for (const batch of archiveBatches(versions)) {
      const ids = batch.map((entry) => entry.versionId);
      const existing = await this.archives.storedDigests(ids, key);
      for (const [id, sha256] of existing) digests.set(id, sha256);
      let todo = batch.filter((entry) => !existing.has(entry.versionId));
      if (todo.length > 0 && contents === 'installable')
        todo = await this.linkUncompleted(todo, format, digests);
      if (todo.length > 0) {
        const filesOf = new Map<string, BundleFile[]>(todo.map((entry) => [entry.versionId, []]));
        for (const row of await this.archives.filesOf(todo.map((entry) => entry.versionId))) {
          filesOf.get(row.versionId)?.push({ path: row.path, bytes: row.bytes, mode: row.mode });
        }
        const sameAsPublished: { versionId: string; sha256: string }[] = [];
        const built = await Promise.all(
          todo.map(async (entry) => {
            let files = filesOf.get(entry.versionId)!;
            let completed = false;
            if (contents === 'installable') {
              ({ files, completed } = installableFiles(files, entry.name, entry.description));
            }
            const archive = await buildArchive(files, format, entry.name);
            if (contents === 'installable' && !completed) {
              sameAsPublished.push({ versionId: entry.versionId, sha256: archive.sha256 });
            }
            return { versionId: entry.versionId, ...archive };
          }),
        );
        await this.archives.store(built, key);
        // The same bytes are the as-published archive, which then needs no build of its own.
        await this.archives.link(sameAsPublished, archiveKey(format, 'as-published'));
        // What is stored wins: a concurrent builder may have stored its archive first.
        const ids = todo.map((entry) => entry.versionId);
        for (const [id, sha256] of await this.archives.storedDigests(ids, key)) digests.set(id, sha256);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return digests;
  }

  /**
   * Of versions lacking an installable archive, links those whose SKILL.md needs no completing to their
   * stored as-published archive (reading only SKILL.md) and answers the rest, which must be built.
   */
  private async linkUncompleted(
    versions: readonly ArchiveToBuild[],
    format: ArchiveFormat,
    digests: Map<string, string>,
  ): Promise<ArchiveToBuild[]> {
    const ids = versions.map((entry) => entry.versionId);
    const [asPublished, skillMds] = await Promise.all([
      this.archives.storedDigests(ids, archiveKey(format, 'as-published')),
      this.archives.skillMdOf(ids),
    ]);
    const links: { versionId: string; sha256: string }[] = [];
    const rest: ArchiveToBuild[] = [];
    for (const entry of versions) {
      const sha256 = asPublished.get(entry.versionId);
      const skillMd = skillMds.get(entry.versionId);
      const uncompleted =
        skillMd !== undefined && !installableSkillMd(skillMd, entry.name, entry.description).completed;
      if (sha256 !== undefined && uncompleted) links.push({ versionId: entry.versionId, sha256 });
      else rest.push(entry);
    }
    await this.archives.link(links, archiveKey(format, 'installable'));
    for (const link of links) digests.set(link.versionId, link.sha256);
    return rest;
  }

  /**
   * Builds the installable archives current versions lack in `format` (with `changedAfter`, those of
   * skills written after that catalogue revision: see startup-checks.ts); answers how many were missing.
   */
  async backfill(format: ArchiveFormat = PUBLISH_ARCHIVE_FORMAT, changedAfter?: number): Promise<number> {
    const missing = await this.archives.missing(archiveKey(format, 'installable'), changedAfter);
    if (missing.length > 0) await this.buildMissing(missing, format, 'installable');
    return missing.length;
  }

  /** The sha256 of each given version's stored archive, for those that have one built. */
  storedDigests(versionIds: readonly string[], format: ArchiveFormat, contents: ArchiveContents) {
    return this.archives.storedDigests(versionIds, archiveKey(format, contents));
  }
}
