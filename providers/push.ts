/** Pieces the adapters' push rules share. */
import { createHash } from 'node:crypto';
import type { PushRequest } from './types.js';
import { parseJson } from './values.js';

/**
 * How long a push is remembered for deduplication (its replay key, per connection). A provider
 * whose signature covers a delivery time refuses deliveries older than this (Smartcar).
 */
export const replayWindowMs = 24 * 60 * 60 * 1000;

/** The body check of providers that push JSON: it must parse. */
export function jsonBodyProblem(body: string): string | null {
  return parseJson(body).ok ? null : 'body is not valid JSON';
}

/** Replay key of a push whose body is all there is to tell deliveries apart: its SHA-256. */
export function bodyReplayKey(request: PushRequest): string {
  return `sha256:${createHash('sha256').update(request.rawBody).digest('hex')}`;
}
