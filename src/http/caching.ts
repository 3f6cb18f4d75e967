/**
 * Cache-Control on replies. What a representation's ETag is, and how long it stays true, is decided in
 * src/services and src/cache; src/http/answer.ts sends it.
 */

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Tag and latest reads may change at any moment: caches must ask again every time. */
export const REVALIDATE = 'public, no-cache';
