import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BundleError, type BundleFile } from '../bundle/types.js';

/** Folders that are never part of a skill and can be huge. */
export const SKIPPED_DIRS = new Set(['.git', 'node_modules', '.hg', '.svn']);

function linkOutside(relative: string, target: string): BundleError {
  const detail = `symbolic link '${relative}' points outside the skill folder (to ${target}); copy the file into the folder or remove the link`;
  return new BundleError(400, 'Bad Request', detail, [{ path: relative, detail }]);
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Reads a skill folder into bundle files. Symbolic links are followed when their target stays inside
 * the folder (monorepos share files that way) and refused otherwise; link cycles are cut.
 */
export async function readSkillFolder(root: string): Promise<BundleFile[]> {
  const realRoot = await realpath(root);
  const files: BundleFile[] = [];
  const visiting = new Set<string>();

  async function addFile(full: string, relative: string): Promise<void> {
    const stats = await stat(full);
    files.push({ path: relative, bytes: await readFile(full), mode: stats.mode & 0o111 ? 0o755 : 0o644 });
  }

  async function walk(dir: string, relativeDir: string): Promise<void> {
    const real = await realpath(dir);
    if (visiting.has(real)) return;
    visiting.add(real);
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) {
        const target = await realpath(full).catch(() => undefined);
        if (!target) {
          const detail = `symbolic link '${relative}' is broken; fix or remove it`;
          throw new BundleError(400, 'Bad Request', detail, [{ path: relative, detail }]);
        }
        if (!isInside(realRoot, target)) throw linkOutside(relative, target);
        const targetStats = await stat(target);
        if (targetStats.isDirectory()) {
          if (!SKIPPED_DIRS.has(entry.name)) await walk(full, relative);
        } else if (targetStats.isFile()) {
          await addFile(target, relative);
        }
      } else if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(full, relative);
      } else if (entry.isFile()) {
        await addFile(full, relative);
      }
    }
    visiting.delete(real);
  }

  const rootStats = await lstat(root);
  if (!rootStats.isDirectory() && !rootStats.isSymbolicLink()) {
    throw new BundleError(400, 'Bad Request', `${root} is not a folder`, [
      { path: root, detail: `${root} is not a folder; pass the folder that holds SKILL.md` },
    ]);
  }
  await walk(root, '');
  return files;
}

/**
 * Every skill folder below root: a folder holding SKILL.md is one skill (its subfolders belong to it
 * and are not searched for more). Hidden folders such as .claude/skills and .agents/skills are searched.
 */
export async function findSkillFolders(root: string): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    if (entries.some((entry) => entry.name === 'SKILL.md' && (entry.isFile() || entry.isSymbolicLink()))) {
      found.push(dir);
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) await walk(path.join(dir, entry.name));
    }
  }
  await walk(root);
  return found;
}
