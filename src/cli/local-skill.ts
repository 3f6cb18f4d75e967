import { stat } from 'node:fs/promises';
import path from 'node:path';
import { type PreparedBundle, prepareBundle } from '../bundle/prepare.js';
import { DEFAULT_LIMITS } from '../bundle/types.js';
import { chooseVersion } from '../bundle/version.js';
import { readSkillFolder } from '../services/skill-folder.js';

/** `publish path/to/SKILL.md` means its folder. */
export async function skillFolderOf(dir: string): Promise<string> {
  const stats = await stat(dir).catch(() => undefined);
  return stats?.isFile() && path.basename(dir) === 'SKILL.md' ? path.dirname(dir) : dir;
}

/**
 * Reads and validates a folder exactly as the server would: the same normalisation, validation and
 * digest (src/bundle/prepare.ts), plus the frontmatter metadata.version check the server makes at publish.
 */
export async function prepareFolder(folder: string): Promise<PreparedBundle> {
  const files = await readSkillFolder(folder);
  const prepared = prepareBundle(files, { limits: DEFAULT_LIMITS });
  const choice = chooseVersion({ metadataVersion: prepared.skill.metadataVersion, existing: [] });
  if (choice.warnings.length > 0) {
    prepared.skill = { ...prepared.skill, warnings: [...prepared.skill.warnings, ...choice.warnings] };
  }
  return prepared;
}
