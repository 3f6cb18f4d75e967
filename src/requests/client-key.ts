import { createHash } from 'node:crypto';

/**
 * Who is asking, as far as a stateless request tells: a short hash of its credentials, and its
 * address. Search feedback (src/services/search-feedback.ts) pairs a client's searches with its later
 * loads by it. The response cache in front of Fastify sees the socket's address, Fastify the address
 * after trusted proxies: behind a proxy the two differ for one client, which loses a pairing, never
 * makes a wrong one.
 */
export function clientKey(address: string | undefined, authorization: string | undefined): string {
  const credentials = authorization
    ? createHash('sha256').update(authorization).digest('base64url').slice(0, 16)
    : '-';
  return `${credentials}@${address ?? '?'}`;
}
