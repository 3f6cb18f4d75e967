import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { installableFiles } from '../bundle/installable-skill-md.js';
import { skillsLockHash } from '../bundle/skills-lock-hash.js';
import type { BundleFile } from '../bundle/types.js';
import { type VersionCommit, versionCommit } from '../git/version-commit.js';
import type {
  InstalledIdentity,
  InstalledRepository,
  VersionToIdentify,
} from '../storage/installed-repository.js';
import type { SkillsRepository } from '../storage/skills-repository.js';

/**
 * A version as hosts install it: the folder installers get (SKILL.md completed), the `computedHash` the
 * `skills` CLI writes to skills-lock.json for it, and its git tree and commit (src/git/version-commit.ts).
 * Computed at publish and stored with the version; versions stored before are computed once when first
 * asked for (or by the start-up backfill) and stored then.
 */
export interface InstalledVersion extends InstalledIdentity {
  commit: VersionCommit;
}

/** The identity of a version from its stored files (as published) and its metadata. */
export function installedVersion(
  version: Omit<VersionToIdentify, 'id'>,
  storedFiles: readonly BundleFile[],
  /** The files as installers get them, when the caller has them already. */
  files: readonly BundleFile[] = installableFiles(storedFiles, version.name, version.description).files,
): InstalledVersion {
  const commit = versionCommit({
    name: version.name,
    version: version.version,
    createdAt: version.createdAt,
    files,
  });
  return { computedHash: skillsLockHash(files), gitTree: commit.treeId, gitCommit: commit.commitId, commit };
}

export class InstalledVersionService {
  constructor(
    private readonly installed: InstalledRepository,
    private readonly skills: SkillsRepository,
  ) {}

  /** The identities of the versions `versionIds`, computing and storing those not stored yet. */
  async identities(versionIds: readonly string[]): Promise<Map<string, InstalledIdentity>> {
    const found = new Map<string, InstalledIdentity>();
    const missing: VersionToIdentify[] = [];
    for (const { identity, ...version } of await this.installed.rows(versionIds)) {
      if (identity) found.set(version.id, identity);
      else missing.push(version);
    }
    for (let start = 0; start < missing.length; start += 50) {
      const computed = await Promise.all(
        missing.slice(start, start + 50).map((version) => this.compute(version)),
      );
      await this.installed.store(computed);
      for (const { id, ...identity } of computed) found.set(id, identity);
      if (start + 50 < missing.length) await yieldToEventLoop();
    }
    return found;
  }

  async identity(versionId: string): Promise<InstalledIdentity> {
    const identity = (await this.identities([versionId])).get(versionId);
    if (!identity) throw new Error(`version ${versionId} is not stored`);
    return identity;
  }

  /** The version with its files as git holds them (for building its repository). */
  async withFiles(version: VersionToIdentify): Promise<InstalledVersion> {
    return installedVersion(version, await this.skills.bundleFiles(version.id));
  }

  /** The versions `versionIds` with their files as git holds them, in the order asked. */
  async manyWithFiles(versionIds: readonly string[]): Promise<InstalledVersion[]> {
    const rows = new Map((await this.installed.rows(versionIds)).map((row) => [row.id, row]));
    const result: InstalledVersion[] = [];
    for (const id of versionIds) {
      const row = rows.get(id);
      if (row) result.push(await this.withFiles(row));
    }
    return result;
  }

  /** Stores the identities of versions stored before they existed, `batch` at a time; answers how many. */
  async backfill(batch = 50): Promise<number> {
    let filled = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await this.installed.withoutIdentity(after, batch);
      if (rows.length === 0) return filled;
      after = rows.at(-1)!.id;
      const computed = await Promise.all(rows.map((row) => this.compute(row)));
      await this.installed.store(computed);
      filled += computed.length;
      await yieldToEventLoop();
    }
  }

  private async compute(version: VersionToIdentify): Promise<{ id: string } & InstalledIdentity> {
    const { computedHash, gitTree, gitCommit } = await this.withFiles(version);
    return { id: version.id, computedHash, gitTree, gitCommit };
  }
}
