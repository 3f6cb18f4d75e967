import type { FastifyReply } from 'fastify';

/**
 * Cache-Control on replies. What a representation's ETag is, and how long it stays true, is decided in
 * src/services and src/cache; src/http/answer.ts sends it.
 */

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Tag and latest reads may change at any moment: caches must ask again every time. */
export const REVALIDATE = 'public, no-cache';

/**
 * For nginx's proxy_cache (deploy/nginx.conf): it stores nothing marked `no-cache`, and with a cache in
 * front it drops the client's If-None-Match, so every conditional GET through it would be a full 200.
 * An X-Accel-Expires in the past makes it store the answer as already stale: it then asks the registry
 * again on every request with the stored ETag (proxy_cache_revalidate) and answers its clients'
 * If-None-Match itself. nginx hides the header from clients; other caches ignore it.
 */
export const NGINX_STORE_STALE = '@1';

/**
 * Sets Cache-Control, and ahead of a shared revalidating one the header nginx needs: nginx 1.22
 * (Debian 12) reads X-Accel-Expires only when it comes before Cache-Control, and then ignores even
 * `private`, so it never goes with an answer meant for one token holder.
 */
export function setCacheControl(reply: FastifyReply, directive: string): FastifyReply {
  if (directive === REVALIDATE) reply.header('x-accel-expires', NGINX_STORE_STALE);
  return reply.header('cache-control', directive);
}
