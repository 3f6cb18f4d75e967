import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeTarGz } from '../bundle/archive-write.js';
import { normalizeEntryPath } from '../bundle/paths.js';
import { type PreparedBundle, prepareBundle } from '../bundle/prepare.js';
import { type BundleLimits, DEFAULT_LIMITS } from '../bundle/types.js';
import { chooseVersion } from '../bundle/version.js';
import { readSkillFolder } from '../services/skill-folder.js';

/**
 * The limits `pull` and `verify` read a downloaded archive with: the registry's own, but for size and
 * file count, which a registry configured above the defaults may have accepted at publish.
 */
export const DOWNLOAD_LIMITS: BundleLimits = {
  ...DEFAULT_LIMITS,
  maxUncompressedBytes: 1024 * 1024 * 1024,
  maxFiles: 100_000,
};

/** `publish path/to/SKILL.md` means its folder. */
export async function skillFolderOf(dir: string): Promise<string> {
  const stats = await stat(dir).catch(() => undefined);
  return stats?.isFile() && path.basename(dir) === 'SKILL.md' ? path.dirname(dir) : dir;
}

/** A skill folder read and checked as the server checks it, with the folder name it is sent under. */
export interface PreparedFolder extends PreparedBundle {
  /** The folder's own name, the top folder of the archive sent; undefined when it cannot be a path. */
  folderName?: string;
}

/**
 * The folder's own name (through links: `.claude/skills/x -> ../../skills/cli-x` is named cli-x) when
 * it can be an archive's top folder as it is (not `/`, no separator in it).
 */
async function folderNameOf(folder: string): Promise<string | undefined> {
  const name = path.basename(await realpath(folder).catch(() => path.resolve(folder)));
  try {
    return name !== '' && normalizeEntryPath(name) === name ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads and validates a folder exactly as the server reads an archive of it (`tar -C parent folder`):
 * the files wrapped in the folder's name, so the server's fallbacks and warnings about that name apply
 * (a SKILL.md without `name` takes the folder's; a folder named differently is warned about). The same
 * normalisation, validation and digest (src/bundle/prepare.ts), plus the metadata.version check the
 * server makes at publish.
 */
export async function prepareFolder(folder: string): Promise<PreparedFolder> {
  const folderName = await folderNameOf(folder);
  const files = await readSkillFolder(folder);
  const wrapped = folderName ? files.map((file) => ({ ...file, path: `${folderName}/${file.path}` })) : files;
  const prepared = prepareBundle(wrapped, { limits: DEFAULT_LIMITS });
  const choice = chooseVersion({ metadataVersion: prepared.skill.metadataVersion, existing: [] });
  if (choice.warnings.length > 0) {
    prepared.skill = { ...prepared.skill, warnings: [...prepared.skill.warnings, ...choice.warnings] };
  }
  return { ...prepared, folderName };
}

/** The archive publish and sync send: the folder as `tar -czf - -C parent folder` would pack it. */
export function archiveOf(prepared: PreparedFolder): Promise<Buffer> {
  return writeTarGz(prepared.files, prepared.folderName ? { prefix: prepared.folderName } : {});
}

/** Two or more folders of one tree that declare the same skill name. */
export interface DuplicateName {
  name: string;
  folders: string[];
}

/** Names declared by more than one folder: publishing both would make one overwrite the other. */
export function duplicateNames(skills: { name: string; folder: string }[]): DuplicateName[] {
  const byName = new Map<string, string[]>();
  for (const { name, folder } of skills) byName.set(name, [...(byName.get(name) ?? []), folder]);
  return [...byName]
    .filter(([, folders]) => folders.length > 1)
    .map(([name, folders]) => ({ name, folders }));
}

/** One line per duplicated name, naming every folder that declares it. */
export function describeDuplicate({ name, folders }: DuplicateName): string {
  return `skill name '${name}' is declared by ${folders.length} folders: ${folders.join(', ')}; rename one (name: in its SKILL.md) or remove it`;
}
