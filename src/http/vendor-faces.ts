import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sniffArchiveKind } from '../bundle/archive-read.js';
import type { BundleLimits } from '../bundle/types.js';
import { BadRequestError } from '../domain/app-errors.js';
import type { Upload } from '../services/skill-writes.js';
import { readMultipartUpload } from './multipart.js';
import { answerError, type ErrorAnswer } from './plugins/error-answers.js';
import { namespaceParam } from './schemas.js';

/** What the vendor faces (src/http/routes/anthropic.ts, openai.ts) share: errors, parameters, uploads. */

/** Path parameters: the namespace when the face is mounted under /namespaces/{namespace}, and the ids. */
export function vendorParams(prefixed: boolean, versionDescription: string) {
  const where = prefixed ? namespaceParam : z.object({});
  const idParams = where.extend({ skill_id: z.string().max(100) });
  return {
    where,
    idParams,
    versionParams: idParams.extend({ version: z.string().max(256).describe(versionDescription) }),
  };
}

const ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 415, 422, 429] as const;

/** The route schemas' error responses, every one in the vendor's error shape. */
export function vendorErrorResponses<S extends z.ZodType>(schema: S) {
  return Object.fromEntries(ERROR_STATUSES.map((code) => [code, schema])) as Record<
    (typeof ERROR_STATUSES)[number],
    S
  >;
}

/**
 * An upload as the SDKs send it: multipart/form-data with one file part per file (the filename its
 * path; OpenAI's SDK strips folders) and plain fields, or a single zip part (folders kept).
 */
export async function vendorUpload(
  request: FastifyRequest,
  limits: BundleLimits,
): Promise<{ upload: Upload; fields: Record<string, string> }> {
  if (!request.isMultipart()) {
    throw new BadRequestError(
      `send multipart/form-data: one files[] part per file (the filename its path, e.g. my-skill/SKILL.md) or a single zip part, not ${request.headers['content-type'] ?? 'no content type'}`,
    );
  }
  const { files, fields } = await readMultipartUpload(request, limits);
  const only = files.length === 1 ? files[0]! : undefined;
  if (only && sniffArchiveKind(only.bytes) !== undefined) {
    return { upload: { kind: 'archive', bytes: only.bytes }, fields };
  }
  return { upload: { kind: 'files', files }, fields };
}

/** What went wrong, as a vendor face reports it: the native answer's status and a one-line message. */
interface VendorFailure {
  status: number;
  message: string;
  /** The request parameter at fault, when one is. */
  param?: string;
}

/**
 * The native answer (src/http/plugins/error-answers.ts) in one message: the vendors' shapes have no list of
 * issues, so the first one (which file, which key, which parameter) joins the detail.
 */
function failureOf(answer: ErrorAnswer): VendorFailure {
  const issues = answer.extensions?.errors as { path: string; detail: string }[] | undefined;
  const first = issues?.[0];
  const message =
    first && !answer.detail.includes(first.detail) ? `${answer.detail}: ${first.detail}` : answer.detail;
  const param = first?.path.split('.').slice(1).join('.');
  return { status: answer.status, message, ...(param ? { param } : {}) };
}

/** Anthropic's error types by status (what its SDK and docs name). */
function anthropicType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

function openAiType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

const SENDERS = {
  anthropic: (reply: FastifyReply, failure: VendorFailure) =>
    reply
      .code(failure.status)
      .type('application/json')
      .send({ type: 'error', error: { type: anthropicType(failure.status), message: failure.message } }),
  openai: (reply: FastifyReply, failure: VendorFailure) =>
    reply
      .code(failure.status)
      .type('application/json')
      .send({
        error: {
          message: failure.message,
          type: openAiType(failure.status),
          param: failure.param ?? null,
          code: null,
        },
      }),
};

/**
 * Makes a vendor face's plugin answer every error, and every path it does not serve, in that vendor's
 * shape, with the status and reason the native API gives.
 */
export function useVendorErrors(app: FastifyInstance, vendor: keyof typeof SENDERS, served: string): void {
  const send = SENDERS[vendor];
  app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply) =>
    send(reply, failureOf(await answerError(error, request, reply))),
  );
  app.setNotFoundHandler((request, reply) =>
    send(reply, {
      status: 404,
      message: `${request.method} ${request.url.split('?')[0]} is not part of the Skills API this registry serves (${served})`,
    }),
  );
}
