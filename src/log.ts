import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/**
 * Paths that may hold a credential whatever the caller; pino replaces them before a line is
 * written. Request headers that carry a provider's push signature are the caller's to name
 * (`secretHeaders`: server/log-redaction.ts takes them from the adapters).
 */
const credentialPaths = [
  'req.headers.authorization',
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

export function createLogger(
  level: LogLevel,
  name = 'fleet',
  destination?: DestinationStream,
  secretHeaders: readonly string[] = [],
): Logger {
  const headerPaths = [...new Set(secretHeaders)].map((header) => `req.headers["${header}"]`);
  const options = {
    name,
    level,
    redact: { paths: [...credentialPaths, ...headerPaths], censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  return destination ? pino(options, destination) : pino(options);
}
