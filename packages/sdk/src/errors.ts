/**
 * What a call throws. Every answer that is not 2xx becomes an `ApiError` carrying the error
 * envelope (`{success: false, error: {code, message, details}}`), with a subclass per status the
 * API documents, so `instanceof` or `status`/`code` tell them apart. A request that got no answer
 * (network failure, timeout) is a `ConnectionError`.
 */

/** The error envelope's `error` object. */
export interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown> | null;
}

/** The base of everything the client throws. */
export class FleetError extends Error {
  override name = 'FleetError';
}

export class ApiError extends FleetError {
  override name = 'ApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The envelope's machine-readable code (`NOT_FOUND`, `RATE_LIMITED`, …), or `HTTP_<status>` when the body had none. */
  readonly code: string;
  /** The envelope's `details` (e.g. `{errors: [{field, message}]}` for `INVALID_REQUEST`). */
  readonly details: Record<string, unknown> | null;
  /** The `x-request-id` header: quote it to the service's operators. */
  readonly requestId: string | null;
  /** Seconds from the `Retry-After` header, when the answer had one. */
  readonly retryAfterSeconds: number | null;
  readonly headers: Headers;

  constructor(status: number, body: ErrorBody, headers: Headers) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.details = body.details;
    this.headers = headers;
    this.requestId = headers.get('x-request-id');
    this.retryAfterSeconds = retryAfterMs(headers.get('retry-after'), Date.now()) / 1000 || null;
  }
}

/** 400: the request is invalid (`INVALID_REQUEST` with `details.errors`, `REFRESH_NOT_SUPPORTED`, …). */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}
/** 401: missing, unknown or revoked API key (`UNAUTHORIZED`). */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
/** 403: not allowed (`FORBIDDEN`). */
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
}
/** 404: unknown id, or another company's (`NOT_FOUND`). */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
/** 409: conflicts with the current state (`ODOMETER_CONFLICT`, `LIMIT_REACHED`, `IDEMPOTENCY_KEY_IN_USE`, …). */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
/** 422: valid but cannot be done (`IDEMPOTENCY_KEY_REUSED`, `WORK_BUDGET_EXCEEDED`). */
export class UnprocessableEntityError extends ApiError {
  override name = 'UnprocessableEntityError';
}
/** 429: rate limited (`RATE_LIMITED`); `retryAfterSeconds` says when to try again. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}
/** 5xx: the service failed or is unavailable; `requestId` finds it in the service's logs. */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

/** No answer: the network failed or the request timed out. */
export class ConnectionError extends FleetError {
  override name = 'ConnectionError';
}

const byStatus: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const { code, message } = value as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string';
}

/** The error for a non-2xx answer whose body (parsed JSON, or null) may hold the error envelope. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): ApiError {
  const envelope = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  const error: ErrorBody = isErrorBody(envelope)
    ? { code: envelope.code, message: envelope.message, details: envelope.details ?? null }
    : { code: `HTTP_${status}`, message: `HTTP ${status}`, details: null };
  const Class = byStatus[status] ?? (status >= 500 ? InternalServerError : ApiError);
  return new Class(status, error, headers);
}

/**
 * Milliseconds a `Retry-After` value asks to wait (delay-seconds or an HTTP date), 0 when absent
 * or unreadable.
 */
export function retryAfterMs(value: string | null, nowMs: number): number {
  if (!value) return 0;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - nowMs);
}
