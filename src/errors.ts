/**
 * Every error the API answers with, declared once: its code (docs/api.md), status and
 * default message, as fastify declares its own in lib/errors.js. Domain code throws `AppError`;
 * the API's error handler turns it into the error envelope by its code.
 */
export const errors = {
  INVALID_REQUEST: { status: 400, message: 'the request is invalid' },
  REFRESH_NOT_SUPPORTED: { status: 400, message: 'this vehicle cannot be asked for data' },
  UNAUTHORIZED: { status: 401, message: 'missing or invalid credentials' },
  FORBIDDEN: { status: 403, message: 'refused: the request did not come from a console page' },
  NOT_FOUND: { status: 404, message: 'not found' },
  ODOMETER_CONFLICT: { status: 409, message: 'the odometer cannot be set to this value' },
  INVALID_STATE_TRANSITION: { status: 409, message: 'not allowed in the current state' },
  LIMIT_REACHED: { status: 409, message: 'the company has reached its limit for this resource' },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    message: 'a request with this Idempotency-Key is still running; retry after the Retry-After seconds',
  },
  REQUEST_TIMEOUT: { status: 408, message: 'the request was not received in time' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'request body is too large' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'this Idempotency-Key was used with a different request' },
  WORK_BUDGET_EXCEEDED: {
    status: 422,
    message: 'the request needs more work than one request may take; details.limit names the limit',
  },
  RATE_LIMITED: { status: 429, message: 'rate limit exceeded; retry after the Retry-After seconds' },
  HEADERS_TOO_LARGE: { status: 431, message: 'request headers are too large' },
  INTERNAL_ERROR: { status: 500, message: 'internal error; the request id is in the x-request-id header' },
  REFRESH_NOT_IMPLEMENTED: { status: 501, message: 'refresh is not implemented for this provider' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'the service is not ready' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errors;

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string = errors[code].message,
    readonly details: Record<string, unknown> | null = null,
    /** Seconds for the Retry-After header (RATE_LIMITED). */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.status = errors[code].status;
  }
}

export function notFound(what: string): AppError {
  return new AppError('NOT_FOUND', `${what} not found`);
}

export function invalidRequest(errors: FieldError[]): AppError {
  return new AppError('INVALID_REQUEST', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

export function rateLimited(retryAfterSeconds: number, message?: string): AppError {
  return new AppError('RATE_LIMITED', message, null, Math.max(1, Math.ceil(retryAfterSeconds)));
}
