import { readdir, readFile, realpath, stat } from 'node:fs/promises';
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
  await requireFolder(root, 'the folder that holds SKILL.md');
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

  await walk(root, '');
  return files;
}

/** Refuses a root that is missing or not a folder with a sentence instead of an ENOENT stack. */
async function requireFolder(root: string, what: string): Promise<void> {
  const stats = await stat(root).catch(() => undefined);
  if (stats?.isDirectory()) return;
  const detail = stats
    ? `${root} is not a folder; pass ${what}`
    : `${root} does not exist (or is a broken link); pass ${what}`;
  throw new BundleError(400, 'Bad Request', detail, [{ path: root, detail }]);
}

/**
 * Every skill folder below root: a folder holding SKILL.md is one skill (its subfolders belong to it
 * and are not searched for more). Hidden folders such as .claude/skills and .agents/skills are searched;
 * .git, node_modules and other SKIPPED_DIRS are not. Symbolic links to folders are followed when they
 * stay inside root (a repository often links .claude/skills/x to skills/x): each real folder is
 * reported once, under the first path found in sorted order, and link cycles are cut.
 */
export async function findSkillFolders(root: string): Promise<string[]> {
  await requireFolder(root, 'a skill folder or a folder containing skill folders');
  const realRoot = await realpath(root);
  const found: string[] = [];
  const seen = new Set<string>();
  async function walk(dir: string): Promise<void> {
    const real = await realpath(dir).catch(() => undefined);
    if (!real || seen.has(real) || !isInside(realRoot, real)) return;
    seen.add(real);
    const entries = await readdir(dir, { withFileTypes: true });
    if (entries.some((entry) => entry.name === 'SKILL.md' && (entry.isFile() || entry.isSymbolicLink()))) {
      found.push(dir);
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (SKIPPED_DIRS.has(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isSymbolicLink() && (await stat(full).catch(() => undefined))?.isDirectory())
        await walk(full);
    }
  }
  await walk(root);
  return found;
}
