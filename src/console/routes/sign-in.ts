/** Sign-in, sign-out and the console's entry (DESIGN §12). */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  deleteConsoleSession,
  deleteExpiredConsoleSessions,
  insertConsoleSession,
  type SessionLifetime,
} from '../../db/console-sessions.js';
import { findConsoleUserForSignIn } from '../../db/console-users.js';
import type { Pool } from '../../db/pool.js';
import { unusablePasswordHash, verifyPassword } from '../../security/passwords.js';
import type { SignInLimiter } from '../sign-in-limiter.js';
import {
  clearedSessionCookie,
  hashSessionToken,
  newCsrfToken,
  newSessionToken,
  sessionCookie,
  sessionTokenFrom,
} from '../session.js';
import { signInPage } from '../views/sign-in.js';
import { CsrfField } from './forms.js';

const SignInForm = Type.Object(
  {
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

function retryWording(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return seconds < 90 ? `${seconds} seconds` : `${minutes} minutes`;
}

export const signInPages: FastifyPluginAsyncTypebox<{
  pool: Pool;
  limiter: SignInLimiter;
  lifetime: SessionLifetime;
  now: () => Date;
}> = async (app, deps) => {
  app.get('/console/sign-in', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(signInPage({ email: '', error: null })),
  );

  app.post('/console/sign-in', { schema: { hide: true, body: SignInForm } }, async (request, reply) => {
    const { email, password } = request.body;
    const address = request.ip;
    const blockedMs = await deps.limiter.blockedFor(email, address);
    if (blockedMs > 0) {
      const seconds = Math.ceil(blockedMs / 1000);
      const retryAt = new Date(deps.now().getTime() + seconds * 1000).toISOString().slice(11, 19);
      return reply
        .code(429)
        .header('retry-after', String(seconds))
        .type('text/html; charset=utf-8')
        .send(
          signInPage({
            email,
            error: `Too many failed sign-ins. Try again in ${retryWording(seconds)} (after ${retryAt} UTC).`,
          }),
        );
    }
    const user = await findConsoleUserForSignIn(deps.pool, email);
    // An unknown email costs the same scrypt as a known one, so timing does not tell them apart.
    const valid = await verifyPassword(password, user?.passwordHash ?? (await unusablePasswordHash()));
    if (!user || !valid) {
      await deps.limiter.recordFailure(email, address);
      return reply
        .code(401)
        .type('text/html; charset=utf-8')
        .send(signInPage({ email, error: 'Wrong email or password.' }));
    }
    const now = deps.now();
    // A new token at every sign-in (no session fixation); the browser's previous session ends.
    const previous = sessionTokenFrom(request);
    if (previous) await deleteConsoleSession(deps.pool, hashSessionToken(previous));
    await deleteExpiredConsoleSessions(deps.pool, user.id, deps.lifetime, now);
    const session = newSessionToken();
    await insertConsoleSession(deps.pool, user.id, session.hash, newCsrfToken(), now);
    return reply.header('set-cookie', sessionCookie(request, session.token)).redirect('/console/vehicles', 303);
  });
};

/** Routes that need a session (registered inside the signed-in scope). */
export const sessionPages: FastifyPluginAsyncTypebox<{ pool: Pool }> = async (app, deps) => {
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/vehicles', 303));

  app.post('/console/sign-out', { schema: { hide: true, body: CsrfField } }, async (request, reply) => {
    await deleteConsoleSession(deps.pool, hashSessionToken(sessionTokenFrom(request)!));
    return reply.header('set-cookie', clearedSessionCookie(request)).redirect('/console/sign-in', 303);
  });
};
