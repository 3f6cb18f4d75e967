import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Tag and latest reads may change at any moment: caches must ask again every time. */
export const REVALIDATE = 'public, no-cache';

/** An ETag for a digest-addressed representation; the variant keeps renderings of one digest apart. */
export function digestEtag(digest: string, variant = ''): string {
  const hex = digest.startsWith('sha256:') ? digest.slice(7) : digest;
  return variant ? `"${hex}.${variant}"` : `"${hex}"`;
}

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
    // Polls repeat the same few queries: remembering their ETags saves a hash per request.
    if (revisionEtags.size >= 10_000) revisionEtags.clear();
    revisionEtags.set(key, etag);
  }
  return etag;
}

const revisionEtags = new Map<string, string>();

/** The opaque part of an entity tag: without surrounding spaces and the weak prefix. */
function opaqueTag(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/** RFC 9110 If-None-Match: weak comparison, lists and `*`. */
export function matchesIfNoneMatch(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  // The common case, a client sending back the ETag it was given, without parsing (polls are hot).
  if (header === etag) return true;
  if (header.trim() === '*') return true;
  const wanted = opaqueTag(etag);
  for (const candidate of header.split(',')) if (opaqueTag(candidate) === wanted) return true;
  return false;
}

/**
 * Sets the validators and answers 304 when the client already has this representation.
 * Returns true when the reply was sent, so the caller can stop before building the body.
 */
export function replyNotModified(
  request: FastifyRequest,
  reply: FastifyReply,
  etag: string,
  cacheControl: string,
): boolean {
  // Behind SKILLREG_READ_AUTH an answer belongs to its token holder: shared caches must not keep it.
  const scoped = request.server.config.readAuth ? cacheControl.replace(/^public\b/, 'private') : cacheControl;
  reply.header('etag', etag).header('cache-control', scoped);
  if (!matchesIfNoneMatch(request, etag)) return false;
  reply.code(304).send();
  return true;
}

/** Exact-version reads never change; anything resolved through a tag may. */
export function cacheControlFor(selector: { version?: string }): string {
  return selector.version !== undefined ? IMMUTABLE : REVALIDATE;
}

/** A cached representation: the bytes to send and what they cost in the cache. */
export interface CachedBody {
  value: Buffer;
  bytes: number;
}

/**
 * The JSON bytes the route's zod response schema would produce (fastify-type-provider-zod encodes
 * with the schema, then JSON.stringify), computed once so a cached answer skips both steps.
 */
export function jsonBody(schema: z.ZodType, data: unknown): CachedBody {
  return bufferBody(JSON.stringify(z.encode(schema, data)));
}

/**
 * Bytes to keep in the cache, in a buffer of their own. Node hands out small buffers as slices of
 * shared 8 KiB slabs; keeping such a slice would keep its whole slab alive, uncounted.
 */
export function bufferBody(value: Buffer | Uint8Array | string): CachedBody {
  const length = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
  const buffer = Buffer.allocUnsafeSlow(length);
  if (typeof value === 'string') buffer.write(value);
  else buffer.set(value);
  return { value: buffer, bytes: length };
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Sends bytes as they are: a Buffer skips the route's serializer. */
export function sendBytes(reply: FastifyReply, contentType: string, body: Buffer): FastifyReply {
  return reply.type(contentType).send(body);
}

/** Sends pre-serialised JSON. */
export function sendJson(reply: FastifyReply, body: Buffer): FastifyReply {
  return sendBytes(reply, JSON_TYPE, body);
}
