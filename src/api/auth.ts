/**
 * Bearer authentication. API keys are looked up by their SHA-256 (a unique-index hit); a revoked
 * key stops matching the moment its row is updated. The operator token is compared in constant
 * time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { findActiveApiKey, touchApiKey } from '../db/api-keys.js';
import type { Pool } from '../db/pool.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { hashApiKey } from '../security/api-keys.js';

export interface Principal {
  keyId: string;
  companyId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match ? match[1]! : null;
}

function unauthorized(reply: FastifyReply, message: string): AppError {
  reply.header('www-authenticate', 'Bearer');
  return new AppError('UNAUTHORIZED', message);
}

// last_used_at is written at most once a minute per key and process, off the request path.
const touchIntervalMs = 60_000;

export function apiKeyAuthentication(pool: Pool, log: Logger): onRequestAsyncHookHandler {
  const lastTouched = new Map<string, number>();
  return async function authenticate(request, reply) {
    const token = bearerToken(request);
    if (!token) throw unauthorized(reply, 'missing API key: send Authorization: Bearer <API_KEY>');
    const principal = await findActiveApiKey(pool, hashApiKey(token));
    if (!principal) throw unauthorized(reply, 'invalid or revoked API key');
    request.principal = { keyId: principal.id, companyId: principal.companyId };
    const now = Date.now();
    if ((lastTouched.get(principal.id) ?? 0) < now - touchIntervalMs) {
      lastTouched.set(principal.id, now);
      touchApiKey(pool, principal.id).catch((err: unknown) => log.warn({ err }, 'could not record API key use'));
    }
  };
}

export function adminAuthentication(adminToken: string): onRequestAsyncHookHandler {
  const expected = createHash('sha256').update(adminToken).digest();
  return async function authenticateOperator(request, reply) {
    const token = bearerToken(request);
    const given = createHash('sha256').update(token ?? '').digest();
    // Comparing fixed-length digests keeps the comparison constant-time whatever the input length.
    if (!token || !timingSafeEqual(given, expected)) throw unauthorized(reply, 'missing or invalid operator token');
  };
}
