/**
 * Console sessions and request checks (docs/console.md): the session cookie, the console's own
 * origin, and the CSRF checks every state change passes.
 *
 * The cookie holds a random 256-bit token; Postgres holds only its SHA-256, so the sessions table
 * cannot sign anyone in. It is HttpOnly (no script reads it), SameSite=Lax (not sent on another
 * site's POST), Path=/console (not sent to the APIs) and Secure when the request came over https
 * (directly or, with TRUST_PROXY, through a proxy that says so).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const sessionCookieName = 'fleet_console';

export function newSessionToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashSessionToken(token) };
}

export function hashSessionToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sessionTokenFrom(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === sessionCookieName) return value.join('=') || null;
  }
  return null;
}

function cookieAttributes(request: FastifyRequest): string {
  return `Path=/console; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`;
}

/** A browser-session cookie: the server ends the session by its idle and absolute deadlines. */
export function sessionCookie(request: FastifyRequest, token: string): string {
  return `${sessionCookieName}=${token}; ${cookieAttributes(request)}`;
}

export function clearedSessionCookie(request: FastifyRequest): string {
  return `${sessionCookieName}=; Max-Age=0; ${cookieAttributes(request)}`;
}

/** scheme://host[:port] the browser sees (TRUST_PROXY makes forwarded scheme and host count). */
export function consoleOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/**
 * Whether a state change comes from a console page: its Origin equals the console's own (a page
 * on another port of the same host is another origin, which SameSite would let through); a
 * browser that sends no Origin is judged by the Referer; a request with neither is refused.
 */
export function fromConsoleOrigin(request: FastifyRequest): boolean {
  const expected = consoleOrigin(request);
  const origin = request.headers.origin;
  if (origin !== undefined) return origin === expected;
  const referer = request.headers.referer;
  if (referer === undefined) return false;
  try {
    return new URL(referer).origin === expected;
  } catch {
    return false;
  }
}

export function csrfTokenMatches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
