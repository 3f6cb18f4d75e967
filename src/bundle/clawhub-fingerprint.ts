import { createHash } from 'node:crypto';
import type { BundleFile } from './types.js';

/**
 * The fingerprint the `clawhub` CLI computes over an installed skill folder to ask a registry which
 * version it is (GET /api/v1/resolve?hash=): SHA-256 of the lines `<path>:<sha256 hex of the bytes>`,
 * ordered by `localeCompare` of the paths and joined with '\n', leaving out every path with a segment
 * that starts with '.' (dotfiles, .git, .clawhub) or is node_modules. (The CLI also leaves out what the
 * folder's own .gitignore names; a bundle that ships one and files it ignores will not resolve.)
 */
export function clawhubFingerprint(files: readonly Pick<BundleFile, 'path' | 'bytes'>[]): string {
  const lines = files
    .filter(
      (file) =>
        !file.path.split('/').some((segment) => segment.startsWith('.') || segment === 'node_modules'),
    )
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((file) => `${file.path}:${createHash('sha256').update(file.bytes).digest('hex')}`);
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}
