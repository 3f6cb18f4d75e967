import type { FastifyReply, FastifyRequest } from 'fastify';
import { ifNoneMatchMatches } from '../cache/etags.js';
import { clientKey } from '../requests/client-key.js';
import { USAGE_HEADER } from '../requests/usage-header.js';
import type { Answer } from '../services/answers.js';
import { IMMUTABLE, REVALIDATE, setCacheControl } from './caching.js';
import { keepResponse } from './plugins/response-cache.js';

/**
 * Sends a service's answer: 304 when the client has it (no body built), else the body with its
 * validators, and lets the response cache repeat it while it stays true. The validators are set only
 * once the body exists, so a refusal while building it never carries them.
 */
export async function sendAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
): Promise<FastifyReply> {
  const cacheControl = cacheControlOf(request, answer);
  if (ifNoneMatchMatches(request.headers['if-none-match'], answer.etag)) {
    // The validators alone are kept too: a client that only revalidates never asks for a 200 again.
    if (answer.validity) keepResponse(request, { validity: answer.validity });
    return setCacheControl(reply.header('etag', answer.etag), cacheControl).code(304).send();
  }
  const { payload, headers } = await answer.body();
  setCacheControl(reply.header('etag', answer.etag), cacheControl);
  if (headers) for (const name in headers) reply.header(name, headers[name]!);
  if (answer.validity) {
    keepResponse(
      request,
      answer.onBody ? { validity: answer.validity, onServe: answer.onBody } : { validity: answer.validity },
    );
  }
  if (request.headers[USAGE_HEADER] !== 'ignore') {
    answer.onBody?.(clientKey(request.ip, request.headers.authorization));
  }
  return reply.type(answer.contentType).send(payload);
}

function cacheControlOf(request: FastifyRequest, answer: Answer): string {
  const directive = answer.immutable ? IMMUTABLE : REVALIDATE;
  // Behind SKILLREG_READ_AUTH an answer belongs to its token holder: shared caches must not keep it.
  return request.server.config.readAuth ? directive.replace(/^public\b/, 'private') : directive;
}
