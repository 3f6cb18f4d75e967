import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { problemSchema } from '../wire/index.js';

/** The problem document is part of the wire; the HTTP layer re-exports it for its plugins. */
export { problemSchema };

export type Problem = z.infer<typeof problemSchema>;

const descriptions: Record<number, string> = {
  400: 'Malformed request or unreadable archive',
  401: 'Missing or invalid bearer token',
  403: 'The token lacks the required scope',
  404: 'Unknown skill, version, tag or file',
  409: 'Version conflict',
  413: 'Over a configured limit',
  415: 'Unsupported media type',
  422: 'Readable but not a valid skill',
  500: 'Unexpected server error',
  503: 'Database unavailable',
};

/** Response schema entries for the given error statuses, for route schemas. */
export function problemResponses<const Codes extends readonly number[]>(...codes: Codes) {
  return Object.fromEntries(
    codes.map((code) => [code, problemSchema.describe(descriptions[code] ?? 'Error')]),
  ) as { [K in Codes[number]]: typeof problemSchema };
}

/**
 * For routes with no specific client error of their own (health, docs): any 4xx the HTTP layer
 * raises (an unparseable request, for instance) is still a problem document. Documented as `4XX`.
 */
export const clientErrors = {
  '4xx': problemSchema.describe('Client error (problem+json)'),
} as const;

/**
 * Problems use `about:blank` with the HTTP status phrase as title (RFC 9457 section 4.2.1);
 * `detail` and the extension members carry the specifics.
 */
export function problemType(_status: number): string {
  return 'about:blank';
}

export function sendProblem(
  reply: FastifyReply,
  status: number,
  title: string,
  detail: string,
  extensions: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .code(status)
    .type('application/problem+json')
    .send({ type: problemType(status), title, status, detail, instance: reply.request.url, ...extensions });
}
