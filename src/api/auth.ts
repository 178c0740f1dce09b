/**
 * Bearer authentication. API keys are looked up by their SHA-256 (a unique-index hit); a revoked
 * key stops matching the moment its row is updated. The operator and metrics tokens are compared
 * in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { findActiveApiKey, touchApiKey } from '../db/api-keys.js';
import type { Pool } from '../db/pool.js';
import { AppError, rateLimited } from '../errors.js';
import type { Logger } from '../log.js';
import { apiKeyPrefix, hasApiKeyShape, hashApiKey } from '../security/api-keys.js';
import type { ApiKeyCache, CachedPrincipal } from '../api-keys/api-key-cache.js';
import { FailedAuthLimiter } from './failed-auth-limiter.js';

export interface Principal {
  keyId: string;
  companyId: string;
  /** The key's visible prefix, what the request log and the audit log show for it. */
  keyPrefix: string;
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

async function lookUp(pool: Pool, cache: ApiKeyCache, token: string, now: number): Promise<CachedPrincipal | null> {
  const hash = hashApiKey(token);
  const cacheKey = hash.toString('base64');
  const cached = cache.get(cacheKey, now);
  if (cached) return cached;
  const version = cache.version();
  const found = await findActiveApiKey(pool, hash);
  if (!found) return null;
  const principal = { keyId: found.id, companyId: found.companyId };
  cache.set(cacheKey, principal, now, version);
  return principal;
}

/**
 * A valid key always authenticates. Failures (no key, a malformed, unknown or revoked one) are
 * counted per client address (`request.ip`, see TRUST_PROXY); past the limit they answer 429
 * instead of 401, and a token that cannot be a key costs no lookup at all.
 */
export function apiKeyAuthentication(pool: Pool, cache: ApiKeyCache, log: Logger): onRequestAsyncHookHandler {
  const lastTouched = new Map<string, number>();
  const failures = new FailedAuthLimiter();
  return async function authenticate(request, reply) {
    const now = Date.now();
    const token = bearerToken(request);
    const principal = token && hasApiKeyShape(token) ? await lookUp(pool, cache, token, now) : null;
    if (!principal) {
      const blockedMs = failures.blockedFor(request.ip, now);
      if (blockedMs > 0) throw rateLimited(blockedMs / 1000, 'too many failed authentications from this address');
      failures.recordFailure(request.ip, now);
      throw unauthorized(
        reply,
        token ? 'invalid or revoked API key' : 'missing API key: send Authorization: Bearer <API_KEY>',
      );
    }
    request.principal = { ...principal, keyPrefix: apiKeyPrefix(token!) };
    if ((lastTouched.get(principal.keyId) ?? 0) < now - touchIntervalMs) {
      lastTouched.set(principal.keyId, now);
      touchApiKey(pool, principal.keyId).catch((err: unknown) => log.warn({ err }, 'could not record API key use'));
    }
  };
}

/** The password of `Authorization: Basic`, which is how a browser sends the operator token. */
function basicPassword(request: FastifyRequest): string | null {
  const match = /^Basic[ ]+([A-Za-z0-9+/=]{1,1024})[ ]*$/i.exec(request.headers.authorization ?? '');
  if (!match) return null;
  const credentials = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  return colon >= 0 ? credentials.slice(colon + 1) : null;
}

/**
 * A check of presented tokens against a configured one (operator, metrics) in constant time: it
 * compares fixed-length digests, so neither the content nor the length of a guess shows in the
 * time taken.
 */
export function tokenMatcher(token: string): (given: string | null) => boolean {
  const expected = createHash('sha256').update(token).digest();
  return (given) => {
    const digest = createHash('sha256')
      .update(given ?? '')
      .digest();
    return timingSafeEqual(digest, expected) && given !== null;
  };
}

/**
 * The operator token as a bearer token, or with `browser` (the queue board) also as the password
 * of HTTP Basic, any user name, so that a browser can prompt for it.
 */
export function adminAuthentication(adminToken: string, { browser = false } = {}): onRequestAsyncHookHandler {
  const matches = tokenMatcher(adminToken);
  return async function authenticateOperator(request, reply) {
    if (!matches(bearerToken(request) ?? (browser ? basicPassword(request) : null))) {
      const error = unauthorized(reply, 'missing or invalid operator token');
      if (browser) reply.header('www-authenticate', 'Basic realm="fleet operator", charset="UTF-8"');
      throw error;
    }
  };
}

/** `Authorization: Bearer <token>` of a fixed token (METRICS_TOKEN), or 401 saying what was wanted. */
export function fixedTokenAuthentication(token: string, refusal: string): onRequestAsyncHookHandler {
  const matches = tokenMatcher(token);
  return async function authenticateToken(request, reply) {
    if (!matches(bearerToken(request))) throw unauthorized(reply, refusal);
  };
}
