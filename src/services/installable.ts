import { fileDigest } from '../bundle/digest.js';
import { type InstallableSkillMd, installableSkillMd } from '../bundle/installable-skill-md.js';
import type { VersionRecord } from '../storage/records.js';
import type { SkillReadService } from './skill-reads.js';

const SKILL_MD = 'SKILL.md';

/** Keyed by the stored file object the read cache hands out, so it lives exactly as long as that entry. */
const installableOf = new WeakMap<object, InstallableSkillMd>();

/** One file as handed to an installer or host: its path, and the size and digest of those bytes. */
export interface InstallableFile {
  path: string;
  size: number;
  /** `sha256:<hex>` of the bytes served. */
  digest: string;
}

/**
 * What faces that hand a skill to an installer or host serve (MCP resources and manifests): the files
 * as published, but SKILL.md with its frontmatter completed where the registry filled in the name or
 * description (src/bundle/installable-skill-md.ts), and digests of exactly those bytes.
 */
export class InstallableSkills {
  constructor(private readonly reads: SkillReadService) {}

  async skillMd(record: VersionRecord): Promise<InstallableSkillMd> {
    const stored = await this.reads.file(record, SKILL_MD);
    // Every resources/read and manifest of a SKILL.md asks: worked out once per file the read cache
    // holds (its entries never change), not once per request.
    let installable = installableOf.get(stored);
    if (installable === undefined) {
      installable = installableSkillMd(stored.bytes, record.name, record.description);
      installableOf.set(stored, installable);
    }
    return installable;
  }

  /** Every file of the version, SKILL.md as served, by path. */
  async files(record: VersionRecord): Promise<{ files: InstallableFile[]; skillMd: InstallableSkillMd }> {
    const [entries, skillMd] = await Promise.all([this.reads.files(record), this.skillMd(record)]);
    const files = entries.map((entry) =>
      entry.path === SKILL_MD
        ? { path: entry.path, size: skillMd.bytes.byteLength, digest: `sha256:${fileDigest(skillMd.bytes)}` }
        : { path: entry.path, size: entry.size, digest: `sha256:${entry.digest}` },
    );
    return { files, skillMd };
  }
}
