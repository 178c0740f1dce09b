/**
 * Every failure leaves as the error envelope with a code from src/errors.ts, chosen by the error's
 * code (ours, or fastify's for what fastify refuses itself); a 5xx never carries the cause (it is
 * logged here, once, with the request id; never the URL, which may hold a device token). Requests
 * that never reach a route (bad percent-encoding, unparseable HTTP, oversized headers) get the
 * envelope too.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseTimeout } from '../db/pool.js';
import { AppError, errors, invalidRequest, type ErrorCode } from '../errors.js';
import { meta, type ErrorEnvelope } from './schemas.js';
import { fieldErrors } from './validation.js';

export function errorEnvelope(
  code: ErrorCode,
  message: string = errors[code].message,
  details: Record<string, unknown> | null = null,
): ErrorEnvelope {
  return { success: false, error: { code, message, details }, meta: meta(null) };
}

const invalid = (field: string, message: string) => invalidRequest([{ field, message }]);

/** Fastify's own refusals of a request, by fastify error code. */
const frameworkErrors: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('PAYLOAD_TOO_LARGE'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => invalid('content-type', 'must be application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => invalid('content-length', 'does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => invalid('body', 'must not be empty'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => invalid('body', 'is not valid JSON'),
  FST_ERR_BAD_URL: () => invalid('url', 'is not a valid URL (bad percent-encoding)'),
  FST_ERR_MAX_PARAM_LENGTH: () => invalid('url', 'has a path segment that is too long'),
};

export function toAppError(error: FastifyError | AppError): AppError {
  if (error instanceof AppError) return error;
  if (error.validation) return invalidRequest(fieldErrors(error.validation as never, error.validationContext));
  const known = frameworkErrors[error.code];
  if (known) return known();
  // Postgres did not answer in time (src/db/pool.ts): overload or a stuck query, so a retry may
  // succeed. 503 says so; the timeout's details stay in the log.
  if (isDatabaseTimeout(error))
    return new AppError('SERVICE_UNAVAILABLE', 'the database did not answer in time; retry later');
  // A plugin's own refusal (swagger-ui's static files): the client's fault, but not one we name.
  const status = error.statusCode ?? 500;
  if (status === 404) return new AppError('NOT_FOUND');
  if (status >= 400 && status < 500) return invalid('request', error.message);
  return new AppError('INTERNAL_ERROR');
}

/** The status and envelope of any error; for plugins that answer errors themselves (the queue board). */
export function errorAnswer(error: FastifyError | AppError): { status: number; body: ErrorEnvelope } {
  const appError = toAppError(error);
  return { status: appError.status, body: errorEnvelope(appError.code, appError.message, appError.details) };
}

export function sendError(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
  if (appError.retryAfterSeconds !== null) reply.header('retry-after', String(appError.retryAfterSeconds));
  return reply.code(appError.status).send(errorEnvelope(appError.code, appError.message, appError.details));
}

/** Fastify's `frameworkErrors` option: refusals made before routing (bad percent-encoding, long params). */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  void sendError(error, request, reply);
}

/**
 * Fastify's `clientErrorHandler` option: Node's HTTP parser refused the bytes (unknown method,
 * malformed request line, headers over the limit), so there is no request to answer through
 * fastify; the envelope is written to the socket and the connection closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('HEADERS_TOO_LARGE')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT')
        : invalid('request', 'is not valid HTTP/1.1');
  const body = JSON.stringify(errorEnvelope(appError.code, appError.message, appError.details));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(sendError);
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).send(errorEnvelope('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
