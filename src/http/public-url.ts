import type { FastifyRequest } from 'fastify';

/** The base of absolute links: SKILLREG_PUBLIC_URL, else what the client called (proxy headers honoured). */
export function publicBaseUrl(request: FastifyRequest): string {
  return request.server.config.publicUrl ?? `${request.protocol}://${request.host}`;
}
