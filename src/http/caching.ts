import type { FastifyReply, FastifyRequest } from 'fastify';
import { ifNoneMatchMatches } from '../cache/etags.js';

/**
 * The HTTP side of caching: validators and Cache-Control on replies, 304 answers, bytes sent as they
 * are. What a representation's ETag is, and how long it stays true, is decided in src/services and
 * src/cache.
 */

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Tag and latest reads may change at any moment: caches must ask again every time. */
export const REVALIDATE = 'public, no-cache';

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
  if (!ifNoneMatchMatches(request.headers['if-none-match'], etag)) return false;
  reply.code(304).send();
  return true;
}

/** Exact-version reads never change; anything resolved through a tag may. */
export function cacheControlFor(selector: { version?: string }): string {
  return selector.version !== undefined ? IMMUTABLE : REVALIDATE;
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
