import { and, asc, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { skillVersions } from '../db/schema.js';

/** What a host sees of a version once installed: its skills-lock hash and its git tree and commit. */
export interface InstalledIdentity {
  computedHash: string;
  gitTree: string;
  gitCommit: string;
}

/** A version whose installed identity is to be computed: what computing it needs besides the files. */
export interface VersionToIdentify {
  id: string;
  name: string;
  version: string;
  description: string;
  createdAt: Date;
}

/** What computing a version's identity reads of it. */
const versionToIdentify = {
  id: skillVersions.id,
  name: skillVersions.name,
  version: skillVersions.version,
  description: skillVersions.description,
  createdAt: skillVersions.createdAt,
};

/** The stored installed identities of versions (columns of skill_versions). */
export class InstalledRepository {
  constructor(private readonly db: Db) {}

  /** `versionIds`' rows: each with its stored identity, or null when it has none yet. */
  async rows(
    versionIds: readonly string[],
  ): Promise<(VersionToIdentify & { identity: InstalledIdentity | null })[]> {
    const found: (VersionToIdentify & { identity: InstalledIdentity | null })[] = [];
    for (let start = 0; start < versionIds.length; start += 2000) {
      const rows = await this.db
        .select({
          ...versionToIdentify,
          computedHash: skillVersions.computedHash,
          gitTree: skillVersions.gitTree,
          gitCommit: skillVersions.gitCommit,
        })
        .from(skillVersions)
        .where(inArray(skillVersions.id, versionIds.slice(start, start + 2000) as string[]));
      for (const { computedHash, gitTree, gitCommit, ...version } of rows) {
        found.push({
          ...version,
          identity: computedHash && gitTree && gitCommit ? { computedHash, gitTree, gitCommit } : null,
        });
      }
    }
    return found;
  }

  /** Versions stored before identities existed, in id order after `after`. */
  async withoutIdentity(after: string, limit: number): Promise<VersionToIdentify[]> {
    return this.db
      .select(versionToIdentify)
      .from(skillVersions)
      .where(and(isNull(skillVersions.gitCommit), gt(skillVersions.id, after)))
      .orderBy(asc(skillVersions.id))
      .limit(limit);
  }

  /** Stores identities; they are derived from immutable data, so a concurrent store writes the same. */
  async store(rows: readonly ({ id: string } & InstalledIdentity)[]): Promise<void> {
    for (const row of rows) {
      await this.db
        .update(skillVersions)
        .set({ computedHash: row.computedHash, gitTree: row.gitTree, gitCommit: row.gitCommit })
        .where(sql`${skillVersions.id} = ${row.id}`);
    }
  }
}
