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

export function createLogger(level: LogLevel, name = 'fleet', destination?: DestinationStream): Logger {
  const options = { name, level, redact: { paths: redactedPaths, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
