import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { BundleError } from '../bundle/types.js';
import { AppError } from '../errors.js';
import { isDatabaseUnavailable } from './plugins/errors.js';

/** What went wrong, as every vendor face reports it in its own shape. */
export interface VendorFailure {
  status: number;
  message: string;
  /** The request parameter at fault, when one is. */
  param?: string;
}

/**
 * The status and a message that says what is wrong and how to fix it, for any error a vendor route
 * can raise: the same rules as the native problem+json answers (src/http/plugins/errors.ts), without
 * their shape.
 */
export function vendorFailure(error: FastifyError, request: FastifyRequest): VendorFailure {
  if (error instanceof BundleError) {
    const first = error.errors[0];
    return {
      status: error.status,
      message: first && first.detail !== error.message ? `${error.message}: ${first.detail}` : error.message,
    };
  }
  if (error instanceof AppError) return { status: error.status, message: error.message };
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issues = error.validation.map((issue) => {
      const where = [error.validationContext, ...issue.instancePath.split('/').filter(Boolean)].join('.');
      return { where, detail: `${where}: ${issue.message}` };
    });
    return {
      status: 400,
      message: `the request is malformed: ${issues.map((issue) => issue.detail).join('; ')}`,
      param: issues[0]?.where.split('.').slice(1).join('.') || undefined,
    };
  }
  if (isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'database unavailable');
    return {
      status: 503,
      message: 'the database is unavailable; retry in a few seconds. Nothing was changed',
    };
  }
  const code = error.code ?? '';
  if (
    code === 'FST_ERR_CTP_BODY_TOO_LARGE' ||
    code === 'FST_REQ_FILE_TOO_LARGE' ||
    code === 'FST_FILES_LIMIT'
  ) {
    return {
      status: 413,
      message: `${error.message}; the registry's bundle limits are configurable (SKILLREG_MAX_BUNDLE_BYTES, SKILLREG_MAX_FILES)`,
    };
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return {
      status: 415,
      message: `content type '${request.headers['content-type'] ?? 'none'}' is not supported here; send multipart/form-data`,
    };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, message: error.message };
  request.log.error({ err: error }, 'unhandled error');
  return {
    status: 500,
    message: `an unexpected error occurred; quote request id ${request.id} when reporting it`,
  };
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

export function sendAnthropicError(reply: FastifyReply, failure: VendorFailure): FastifyReply {
  return reply
    .code(failure.status)
    .type('application/json')
    .send({ type: 'error', error: { type: anthropicType(failure.status), message: failure.message } });
}

/** OpenAI's error object: `type` by status, `param` when a parameter is at fault, `code` the status name. */
export function sendOpenAiError(reply: FastifyReply, failure: VendorFailure): FastifyReply {
  const type =
    failure.status === 401
      ? 'authentication_error'
      : failure.status === 403
        ? 'permission_error'
        : failure.status === 404
          ? 'not_found_error'
          : failure.status >= 500
            ? 'server_error'
            : 'invalid_request_error';
  return reply
    .code(failure.status)
    .type('application/json')
    .send({ error: { message: failure.message, type, param: failure.param ?? null, code: null } });
}
