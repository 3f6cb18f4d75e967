import { createHash } from 'node:crypto';

/** Hex sha256 of bytes or text, computed independently of the code under test. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The registry's digest notation, `sha256:<hex>`. */
export function sha256Digest(bytes: Uint8Array | string): string {
  return `sha256:${sha256Hex(bytes)}`;
}
