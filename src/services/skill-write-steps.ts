import { pickLatest, sortVersionsDescending } from '../bundle/version.js';
import { ConflictError } from '../domain/app-errors.js';
import { LATEST, type VersionRow } from '../storage/records.js';
import type { SkillWrite } from '../storage/skills-repository.js';
import { unknownNamespace, unknownSkill, unknownVersion } from './not-found.js';

/**
 * Steps of a write to one skill that several writes share (publish, review, rescan, tag moves,
 * yanks): each runs inside the skill's transaction, on its SkillWrite (src/services/skill-writes.ts).
 */

/**
 * Identical content is idempotent: the version it was published as answers again. With an explicit
 * version only that version counts, so CI can deliberately re-release the same files under a new number.
 */
export function findIdenticalVersion(
  existing: readonly VersionRow[],
  digest: string,
  choice: { version: string; source: string },
) {
  const sameVersion = existing.find((row) => row.version === choice.version && row.digest === digest);
  if (sameVersion) return sameVersion;
  if (choice.source === 'query') return undefined;
  const matches = existing.filter((row) => row.digest === digest);
  const live = matches.filter((row) => !row.yankedAt);
  const pool = live.length > 0 ? live : matches;
  const newest = sortVersionsDescending(pool.map((row) => row.version))[0];
  return pool.find((row) => row.version === newest);
}

/** Re-points an unpinned (or dangling) `latest` at the highest non-yanked version. */
export async function refreshLatest(
  write: SkillWrite,
  skillId: string,
  known?: { versions: readonly VersionRow[] },
): Promise<void> {
  // The new version alone: the skill had none before this write, so it has no tag to read yet.
  const current = known?.versions.length === 1 ? undefined : await write.latestTag(skillId);
  if (current?.pinned) return;
  const live = known
    ? known.versions.filter((row) => row.yankedAt === null && row.quarantine === null)
    : await write.liveVersions(skillId);
  const latest = pickLatest(live.map((row) => row.version));
  const target = live.find((row) => row.version === latest);
  if (!target) {
    await write.removeTag(skillId, LATEST);
    return;
  }
  if (current?.versionId === target.id) return;
  await write.setTag(skillId, LATEST, target.id, { pinned: false });
}

/** Points a tag at a version by hand (pinned), audited; returns the version it pointed at before. */
export async function pointTag(
  write: SkillWrite,
  skillId: string,
  name: string,
  tag: string,
  version: string,
  actor: string,
): Promise<string | null> {
  const target = await write.versionByNumber(skillId, version, { quarantined: true });
  if (!target) {
    const versions = (await write.versionRows(skillId)).map((row) => row.version);
    throw unknownVersion(name, version, versions);
  }
  if (target.quarantine) {
    throw new ConflictError(
      `version ${version} of '${name}' is in quarantine (the security scan blocked it) and cannot carry a dist-tag; an admin can review it (POST /skills/${name}/versions/${version}/review)`,
      { name, version, quarantine: target.quarantine },
    );
  }
  if (target.yankedAt) {
    throw new ConflictError(
      `version ${version} of '${name}' is yanked and cannot carry a dist-tag; pick a version that is not yanked`,
      { name, version },
    );
  }
  const previous = await write.taggedVersion(skillId, tag);
  await write.setTag(skillId, tag, target.id, { pinned: true });
  await write.audit({ actor, action: 'tag', skill: name, version, detail: { tag, previous } });
  return previous;
}

/** The skill a tag move or yank is about; a 404 naming similar skills when there is none. */
export async function existingSkill(write: SkillWrite, name: string): Promise<string> {
  if (write.skillId !== undefined) return write.skillId;
  if (!(await write.namespaceExists(write.namespace))) {
    throw unknownNamespace(write.namespace, await write.namespaceNames());
  }
  throw await unknownSkill(name, write, [write.namespace]);
}
