/**
 * Error codes of the API contract (DESIGN §4) and the status each answers with. Domain code
 * throws `AppError`; the API's error handler turns it into the error envelope.
 */
export const errorStatus = {
  INVALID_REQUEST: 400,
  REFRESH_NOT_SUPPORTED: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  ODOMETER_CONFLICT: 409,
  INVALID_STATE_TRANSITION: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  REFRESH_NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> | null = null,
  ) {
    super(message);
    this.status = errorStatus[code];
  }
}

export function notFound(what: string): AppError {
  return new AppError('NOT_FOUND', `${what} not found`);
}

export function invalidRequest(errors: FieldError[]): AppError {
  return new AppError('INVALID_REQUEST', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}
