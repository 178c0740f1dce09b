/** Sign-in, sign-out and the console's entry (docs/console.md). */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  deleteConsoleSession,
  deleteExpiredConsoleSessions,
  insertConsoleSession,
  type SessionLifetime,
} from '../../db/console-sessions.js';
import { findConsoleUserForSignIn } from '../../db/console-users.js';
import { withTransaction, type Pool } from '../../db/pool.js';
import { recordAudit, userActor } from '../../audit/record.js';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../metrics.js';
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
  signIns: Metrics['consoleSignIns'];
  lifetime: SessionLifetime;
  now: () => Date;
}> = async (app, deps) => {
  app.get('/console/sign-in', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(signInPage({ email: '', error: null })),
  );

  app.post('/console/sign-in', { schema: { hide: true, body: SignInForm } }, async (request, reply) => {
    const { email, password } = request.body;
    const refuse = (status: number, retryAfterSeconds: number, error: string) =>
      reply
        .code(status)
        .header('retry-after', String(retryAfterSeconds))
        .type('text/html; charset=utf-8')
        .send(signInPage({ email, error }));

    // Reserved before the check, so a burst of wrong passwords gets at most the limit of checks.
    const reservation = await deps.limiter.reserve(email, request.ip);
    if (!reservation.allowed) {
      deps.signIns.inc({ outcome: 'limited' });
      const seconds = Math.ceil(reservation.retryAfterMs / 1000);
      const retryAt = new Date(deps.now().getTime() + seconds * 1000).toISOString().slice(11, 19);
      return refuse(
        429,
        seconds,
        `Too many failed sign-ins. Try again in ${retryWording(seconds)} (after ${retryAt} UTC).`,
      );
    }
    let user: Awaited<ReturnType<typeof findConsoleUserForSignIn>>;
    let valid: boolean;
    try {
      user = await findConsoleUserForSignIn(deps.pool, email);
      // An unknown email costs the same scrypt as a known one, so timing does not tell them apart.
      valid = await verifyPassword(password, user?.passwordHash ?? (await unusablePasswordHash()));
    } catch (failure) {
      // Not checked, so not a failure: the attempt is given back.
      await reservation.release();
      if (!(failure instanceof AppError) || failure.code !== 'SERVICE_UNAVAILABLE') throw failure;
      deps.signIns.inc({ outcome: 'busy' });
      return refuse(503, failure.retryAfterSeconds ?? 1, 'Too many sign-ins at this moment. Try again in a second.');
    }
    if (!user || !valid) {
      deps.signIns.inc({ outcome: 'wrong_password' });
      // Only a known user's failures are the company's to see; an unknown email belongs to no company.
      if (user) {
        const target = { type: 'user', id: user.id } as const;
        await recordAudit(
          deps.pool,
          user.companyId,
          userActor({ userId: user.id, email: user.email }),
          'sign_in.failed',
          target,
        );
      }
      return reply
        .code(401)
        .type('text/html; charset=utf-8')
        .send(signInPage({ email, error: 'Wrong email or password.' }));
    }
    deps.signIns.inc({ outcome: 'signed_in' });
    await reservation.release();
    const now = deps.now();
    // A new token at every sign-in (no session fixation); the browser's previous session ends.
    const previous = sessionTokenFrom(request);
    if (previous) await deleteConsoleSession(deps.pool, hashSessionToken(previous));
    await deleteExpiredConsoleSessions(deps.pool, user.id, deps.lifetime, now);
    const session = newSessionToken();
    await withTransaction(deps.pool, async (tx) => {
      await insertConsoleSession(tx, user.id, session.hash, newCsrfToken(), now);
      await recordAudit(tx, user.companyId, userActor({ userId: user.id, email: user.email }), 'sign_in.succeeded', {
        type: 'user',
        id: user.id,
      });
    });
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
