/**
 * The one error class that carries an HTTP status: every refusal below the HTTP layer (bundle,
 * storage, services, renderers) is an AppError or a subclass. The HTTP error handler turns each into
 * an RFC 9457 problem whose extra members are `extensions`; MCP turns it into a tool error result.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export class NotFoundError extends AppError {
  constructor(detail: string, extensions: Record<string, unknown> = {}) {
    super(404, 'Not Found', detail, extensions);
  }
}

export class ConflictError extends AppError {
  constructor(detail: string, extensions: Record<string, unknown> = {}) {
    super(409, 'Conflict', detail, extensions);
  }
}

export class BadRequestError extends AppError {
  constructor(detail: string, extensions: Record<string, unknown> = {}) {
    super(400, 'Bad Request', detail, extensions);
  }
}

export class UnprocessableError extends AppError {
  constructor(detail: string, errors: { path: string; detail: string }[]) {
    super(422, 'Unprocessable Content', detail, { errors });
  }
}
