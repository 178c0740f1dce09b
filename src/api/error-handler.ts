/**
 * Every failure leaves as the error envelope with a code from DESIGN §4; a 5xx never carries the
 * cause (it is logged here, once, with the request id; never the URL, which may hold a device token).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorStatus, invalidRequest, type ErrorCode } from '../errors.js';
import { meta, type ErrorEnvelope } from './schemas/common.js';
import { fieldErrors } from './validation.js';

export function errorEnvelope(code: ErrorCode, message: string, details: Record<string, unknown> | null = null): ErrorEnvelope {
  return { success: false, error: { code, message, details }, meta: meta(null) };
}

function classify(error: FastifyError | AppError): { code: ErrorCode; message: string; details: Record<string, unknown> | null } {
  if (error instanceof AppError) return { code: error.code, message: error.message, details: error.details };
  if (error.validation) {
    const invalid = invalidRequest(fieldErrors(error.validation as never, error.validationContext));
    return { code: invalid.code, message: invalid.message, details: invalid.details };
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return { code: 'PAYLOAD_TOO_LARGE', message: 'request body is too large', details: null };
  if (status === 429) return { code: 'RATE_LIMITED', message: 'rate limit exceeded; retry after the Retry-After seconds', details: null };
  if (status === 415) {
    return { code: 'INVALID_REQUEST', message: 'Content-Type must be application/json', details: { errors: [{ field: 'content-type', message: 'must be application/json' }] } };
  }
  if (status >= 400 && status < 500) {
    return { code: 'INVALID_REQUEST', message: error.message, details: { errors: [{ field: 'body', message: error.message }] } };
  }
  return { code: 'INTERNAL_ERROR', message: 'internal error; the request id is in the x-request-id header', details: null };
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const { code, message, details } = classify(error);
    const status = errorStatus[code];
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(status).send(errorEnvelope(code, message, details));
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).send(errorEnvelope('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
