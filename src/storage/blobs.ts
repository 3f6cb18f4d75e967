import { inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { blobs } from '../db/schema.js';

/** Content to store under its hex sha256 (computed by the caller). */
export interface NewBlob {
  digest: string;
  bytes: Uint8Array;
}

/** Rows per insert: keeps each statement's parameters and memory reasonable for bundles of thousands of files. */
const INSERT_BATCH = 500;

/** Contents larger than this in all are checked for what is stored already before they are sent. */
const ASK_FIRST_BYTES = 256 * 1024;

/** Inserts the contents not stored yet; a file shared by many versions is stored once. */
export async function storeBlobs(db: Db, entries: readonly NewBlob[]): Promise<void> {
  const unique = new Map(entries.map((entry) => [entry.digest, entry.bytes]));
  if (unique.size === 0) return;
  let bytes = 0;
  for (const content of unique.values()) bytes += content.byteLength;
  // Asking first which are stored saves sending them again; for a few small files the question costs
  // more than the bytes (the insert leaves stored ones alone either way).
  if (unique.size > INSERT_BATCH || bytes > ASK_FIRST_BYTES) {
    const present = await db
      .select({ digest: blobs.digest })
      .from(blobs)
      .where(inArray(blobs.digest, [...unique.keys()]));
    for (const { digest } of present) unique.delete(digest);
  }
  const missing = [...unique.entries()].map(([digest, content]) => ({
    digest,
    size: content.byteLength,
    content,
  }));
  for (let start = 0; start < missing.length; start += INSERT_BATCH) {
    await db
      .insert(blobs)
      .values(missing.slice(start, start + INSERT_BATCH))
      .onConflictDoNothing();
  }
}
