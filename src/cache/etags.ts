import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * Entity tags: how every face names a representation (RFC 9110). Content, files and bundles are named
 * by their digest; listings and renderings by the catalogue revision and the request's shape.
 */

/** An ETag for a digest-addressed representation; the variant keeps renderings of one digest apart. */
export function digestEtag(digest: string, variant = ''): string {
  const hex = digest.startsWith('sha256:') ? digest.slice(7) : digest;
  return variant ? `"${hex}.${variant}"` : `"${hex}"`;
}

/** Polls repeat the same few queries: the ETags of the most recent ones are remembered. */
const revisionEtags = new LRUCache<string, string>({ max: 10_000 });

/** An ETag for a listing: the catalogue revision plus everything in the request that shapes the answer. */
export function revisionEtag(revision: number, ...shape: unknown[]): string {
  const key = `${revision}|${JSON.stringify(shape)}`;
  let etag = revisionEtags.get(key);
  if (etag === undefined) {
    const hash = createHash('sha256')
      .update(key.slice(key.indexOf('|') + 1))
      .digest('base64url')
      .slice(0, 16);
    etag = `W/"r${revision}-${hash}"`;
    revisionEtags.set(key, etag);
  }
  return etag;
}

/** The opaque part of an entity tag: without surrounding spaces and the weak prefix. */
function opaqueTag(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/** RFC 9110 If-None-Match against one ETag: weak comparison, lists and `*`. */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  // The common case, a client sending back the ETag it was given, without parsing (polls are hot).
  if (header === etag) return true;
  if (header.trim() === '*') return true;
  const wanted = opaqueTag(etag);
  for (const candidate of header.split(',')) if (opaqueTag(candidate) === wanted) return true;
  return false;
}
