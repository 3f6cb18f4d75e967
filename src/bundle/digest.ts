import { createHash } from 'node:crypto';
import type { BundleFile } from './types.js';

const NUL = Buffer.from([0]);

/** Lowercase hex sha256 of one file's bytes (the per-file `digest` in metadata responses). */
export function fileDigest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The content digest of a bundle, `sha256:<64 lowercase hex>`.
 *
 * Canonical form hashed (the same for every upload format, so a tar.gz, a zip and a multipart upload
 * of the same files agree):
 *
 *   for each file, sorted by path compared as UTF-8 bytes (Buffer.compare order):
 *     <path as UTF-8> 0x00 <byte length as ASCII decimal> 0x00 <file bytes>
 *
 * Paths are the normalised relative paths ("SKILL.md", "scripts/run.py"). Neither file modes nor
 * timestamps are part of the digest: they do not change what an agent reads. The length prefix makes
 * the encoding unambiguous (no two file sets produce the same byte stream).
 */
export function bundleDigest(files: readonly BundleFile[]): string {
  const hash = createHash('sha256');
  for (const file of sortByPathBytes(files)) {
    hash.update(Buffer.from(file.path, 'utf8'));
    hash.update(NUL);
    hash.update(String(file.bytes.byteLength), 'ascii');
    hash.update(NUL);
    hash.update(file.bytes);
  }
  return `sha256:${hash.digest('hex')}`;
}

/** The single ordering used by the digest and by the archive writers, independent of locale. */
export function sortByPathBytes<T extends { path: string }>(files: readonly T[]): T[] {
  return files
    .map((file) => ({ file, key: Buffer.from(file.path, 'utf8') }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ file }) => file);
}
