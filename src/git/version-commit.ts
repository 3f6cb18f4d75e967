import type { BundleFile } from '../bundle/types.js';
import { commitOf, type GitFile, type GitSignature } from './objects.js';

/**
 * A version as a git commit: the tree is the skill's folder as installers get it (SKILL.md completed,
 * every other file byte for byte, the executable bit kept), the commit has no parent, and its author,
 * committer, time and message come from the version alone. So the same version has the same commit id on
 * every replica, after restarts and after a rebuild, and yanking, tagging or publishing other versions
 * never changes it.
 */

export const REGISTRY_SIGNATURE = { name: 'skill-registry', email: 'skill-registry@localhost' } as const;

export interface VersionCommit {
  commitId: string;
  treeId: string;
  files: GitFile[];
  author: GitSignature;
  message: string;
}

/** Files git cannot hold or check out: anything inside a `.git` folder (in any letter case). */
export function gitStorable(path: string): boolean {
  return !path.split('/').some((segment) => segment.toLowerCase() === '.git');
}

export function gitFiles(files: readonly BundleFile[]): GitFile[] {
  return files
    .filter((file) => gitStorable(file.path))
    .map((file) => ({ path: file.path, bytes: file.bytes, executable: (file.mode & 0o111) !== 0 }));
}

export function versionCommit(input: {
  name: string;
  version: string;
  createdAt: Date;
  /** The installable files (src/bundle/installable-skill-md.ts installableFiles). */
  files: readonly BundleFile[];
}): VersionCommit {
  const files = gitFiles(input.files);
  const author = { ...REGISTRY_SIGNATURE, seconds: Math.floor(input.createdAt.getTime() / 1000) };
  const message = `${input.name} ${input.version}\n`;
  const { id, treeId } = commitOf({ files, author, message });
  return { commitId: id, treeId, files, author, message };
}
