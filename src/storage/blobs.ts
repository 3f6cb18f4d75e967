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

/** Inserts the contents not stored yet; a file shared by many versions is stored once. */
export async function storeBlobs(db: Db, entries: readonly NewBlob[]): Promise<void> {
  const unique = new Map(entries.map((entry) => [entry.digest, entry.bytes]));
  if (unique.size === 0) return;
  const present = await db
    .select({ digest: blobs.digest })
    .from(blobs)
    .where(inArray(blobs.digest, [...unique.keys()]));
  for (const { digest } of present) unique.delete(digest);
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
