import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/** Paths that may hold a credential; pino replaces them before a line is written. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers["x-samsara-signature"]',
  'req.headers["sc-signature"]',
  'req.headers["x-kt-webhook-signature"]',
  'req.headers["x-signature"]',
  '*.key',
  '*.token',
  '*.secret',
  '*.signing_secret',
  '*.password',
  '*.api_token',
  '*.webhook_secret',
];

/**
 * Errors are logged as type, message, code and stack only: libraries hang whole objects on them
 * (pg-pool attaches the client, with its connection parameters and password).
 */
function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message: err.message, ...(code === undefined ? {} : { code }), stack: err.stack };
}

export function createLogger(level: LogLevel, name = 'fleet', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  return destination ? pino(options, destination) : pino(options);
}
