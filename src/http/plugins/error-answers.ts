import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError } from '../../domain/app-errors.js';
import { discardRestOfBody } from '../oversized.js';
import { sendProblem } from '../problem.js';

const SUPPORTED_UPLOADS =
  'application/gzip (tar.gz), application/zip (zip or .skill), multipart/form-data (one part per file) or text/markdown (a lone SKILL.md)';

/**
 * Error codes meaning PostgreSQL cannot be reached or cannot take the query now: network errors from
 * the socket, SQLSTATE class 08 (connection exception), 57P01-57P03 (server shutting down, crashed or
 * starting up) and 53300 (too many connections). These become 503 with Retry-After so clients retry.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect|Query read timeout|Client was closed and is not queryable/i;

/** Seconds a client is told to wait before retrying while the database is away. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Whether an error (or one it wraps: drizzle puts the driver's error in `cause`, a failed connection
 * to several addresses is an AggregateError) says the database is unreachable.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(cause, depth + 1);
}

/** What a failed request answers, whatever shape the face sends it in. */
export interface ErrorAnswer {
  status: number;
  title: string;
  /** What is wrong and how to fix it. */
  detail: string;
  extensions?: Record<string, unknown>;
}

/**
 * The answer to any error a route raised: its status, title and a detail that says what is wrong and
 * how to fix it. Sets what the answer needs on the reply (Retry-After, Connection: close) and, for an
 * oversized body, reads the rest of it first so the client can read the answer. Every face sends
 * this: problem+json natively, the vendors' shapes on theirs (src/http/vendor-faces.ts).
 */
export async function answerError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ErrorAnswer> {
  const { config } = request.server;
  if (error instanceof AppError) {
    return { status: error.status, title: error.title, detail: error.message, extensions: error.extensions };
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const errors = error.validation.map((issue) => {
      const where = [error.validationContext, ...issue.instancePath.split('/').filter(Boolean)].join('.');
      return { path: where, detail: `${where}: ${issue.message}` };
    });
    return {
      status: 400,
      title: 'Bad Request',
      detail: `the request is malformed: ${errors.map((item) => item.detail).join('; ')}`,
      extensions: { errors },
    };
  }
  if (isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'database unavailable');
    reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
    return {
      status: 503,
      title: 'Service Unavailable',
      detail: `the database is unavailable; retry in ${DATABASE_RETRY_AFTER_SECONDS} s (Retry-After). Nothing was changed by this request`,
      extensions: { retryAfter: DATABASE_RETRY_AFTER_SECONDS },
    };
  }
  // drizzle wraps driver errors: the SQLSTATE sits on the cause.
  const code = error.code ?? (error.cause as { code?: string } | undefined)?.code;
  switch (code) {
    // PostgreSQL refuses NUL and other unencodable characters in text; that is the caller's input.
    case '22021':
    case '22P05':
      return {
        status: 400,
        title: 'Bad Request',
        detail:
          'the request contains a character the registry cannot store or search for (such as NUL); remove it',
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(
        request,
        reply,
        `the request body is larger than the limit of ${config.bodyLimit} bytes; raise SKILLREG_MAX_BUNDLE_BYTES or publish a smaller bundle`,
        { limit: config.bodyLimit },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        title: 'Unsupported Media Type',
        detail: `content type '${request.headers['content-type'] ?? 'none'}' is not supported here; send ${SUPPORTED_UPLOADS}`,
      };
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return tooLarge(request, reply, `${error.message}; the limits are configurable`, {
        limits: config.limits,
      });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, title: httpTitle(status), detail: error.message };
  request.log.error({ err: error }, 'unhandled error');
  return {
    status: 500,
    title: 'Internal Server Error',
    detail: `an unexpected error occurred; quote request id ${request.id} when reporting it`,
  };
}

/** A 413 for a body over a limit: the rest of the body is read and dropped, and the connection closed. */
async function tooLarge(
  request: FastifyRequest,
  reply: FastifyReply,
  detail: string,
  extensions: Record<string, unknown>,
): Promise<ErrorAnswer> {
  await discardRestOfBody(request.raw);
  reply.header('connection', 'close');
  return { status: 413, title: 'Content Too Large', detail, extensions };
}

async function errorsPlugin(app: FastifyInstance) {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const answer = await answerError(error, request, reply);
    return sendProblem(reply, answer.status, answer.title, answer.detail, answer.extensions);
  });

  app.setNotFoundHandler((request, reply) => {
    return sendProblem(
      reply,
      404,
      'Not Found',
      `no route ${request.method} ${request.url.split('?')[0]}; the API is described at /docs and /openapi.json`,
    );
  });
}

function httpTitle(status: number): string {
  const titles: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    406: 'Not Acceptable',
    409: 'Conflict',
    413: 'Content Too Large',
    415: 'Unsupported Media Type',
    422: 'Unprocessable Content',
    429: 'Too Many Requests',
  };
  return titles[status] ?? 'Error';
}

export default fp(errorsPlugin, { name: 'errors' });
