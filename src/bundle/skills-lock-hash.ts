import { createHash } from 'node:crypto';
import type { BundleFile } from './types.js';

/**
 * The hash the public `skills` CLI writes as `computedHash` to skills-lock.json for an installed skill
 * folder: SHA-256 over each file's path (relative, '/'-separated) followed by its bytes, files ordered by
 * `localeCompare` of their paths, files inside `.git` or `node_modules` folders left out (as the CLI
 * leaves them out when it walks the folder). Given the files a host installs, a lockfile entry can be
 * checked against the registry.
 */
export function skillsLockHash(files: readonly Pick<BundleFile, 'path' | 'bytes'>[]): string {
  const hash = createHash('sha256');
  const kept = files
    .filter(
      (file) => !file.path.split('/').some((segment) => segment === '.git' || segment === 'node_modules'),
    )
    .sort((a, b) => a.path.localeCompare(b.path));
  for (const file of kept) {
    hash.update(file.path);
    hash.update(file.bytes);
  }
  return hash.digest('hex');
}
