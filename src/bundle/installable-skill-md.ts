import { stringify } from 'yaml';
import { decodeUtf8, splitFrontmatter } from './frontmatter.js';
import type { BundleFile } from './types.js';

/**
 * The SKILL.md an installer or host is handed. The Agent Skills format wants it to open with
 * frontmatter holding `name` and `description`; a skill published without them (the registry filled
 * them in from the folder name or the first paragraph) is served with them written in. Only the
 * frontmatter block changes: the rest of the file stays byte for byte. The stored version, its digest
 * and `/content` stay as published.
 */
export interface InstallableSkillMd {
  bytes: Uint8Array;
  /** The frontmatter of `bytes`, as a host parsing them reads it. */
  frontmatter: Record<string, unknown>;
  /** Whether the bytes differ from the stored ones. */
  completed: boolean;
}

/** A frontmatter block at the start of the file: its opening line, its YAML, its closing line. */
const FRONTMATTER_BLOCK = /^\uFEFF?---[ \t]*\r?\n(?:[\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)/;

export function installableSkillMd(
  stored: Uint8Array,
  name: string,
  description: string,
): InstallableSkillMd {
  const text = decodeUtf8(stored);
  const split = splitFrontmatter(text);
  if (split.hasFrontmatter && split.data.name === name && split.data.description === description) {
    return { bytes: stored, frontmatter: split.data, completed: false };
  }
  // The registry's name and description first, then every other key the author wrote, in order.
  const { name: _name, description: _description, ...rest } = split.data;
  const frontmatter = { name, description, ...rest };
  const block = `---\n${stringify(frontmatter, { lineWidth: 0 })}---\n`;
  const match = split.hasFrontmatter ? FRONTMATTER_BLOCK.exec(text) : null;
  const after = match ? text.slice(match[0].length) : text.replace(/^\uFEFF/, '');
  return {
    bytes: Buffer.from(block + after, 'utf8'),
    frontmatter: splitFrontmatter(block).data,
    completed: true,
  };
}

/**
 * A version's files as an installer gets them: SKILL.md completed (see installableSkillMd), the rest as
 * stored. `declared`: SKILL.md is known to hold exactly `name` and `description` already (its parse at
 * publish said so), so it is not parsed again.
 */
export function installableFiles(
  files: readonly BundleFile[],
  name: string,
  description: string,
  declared = false,
): { files: BundleFile[]; completed: boolean } {
  if (declared) return { files: [...files], completed: false };
  let completed = false;
  const result = files.map((file) => {
    if (file.path !== 'SKILL.md') return file;
    const skillMd = installableSkillMd(file.bytes, name, description);
    completed = skillMd.completed;
    return skillMd.completed ? { ...file, bytes: skillMd.bytes } : file;
  });
  return { files: result, completed };
}
