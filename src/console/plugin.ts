/**
 * The developer console (docs/console.md): server-rendered pages under /console for
 * the people of a customer company. Every page and action runs the same db functions and
 * services as the public API, scoped by the session's company instead of an API key's.
 *
 * Order of checks on a signed-in route: the session cookie (page GETs without a live session
 * redirect to sign-in; anything else answers 401), then for a POST the Origin (or Referer) and
 * the session's CSRF token from the form.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findConsoleSession, touchConsoleSession } from '../db/console-sessions.js';
import { AppError } from '../errors.js';
import { assets } from './assets.js';
import { consolePolicies } from './content-security-policy.js';
import type { ConsoleDeps } from './deps.js';
import { sendConsoleError } from './errors.js';
import { activityPages } from './routes/activity.js';
import { apiKeyPages } from './routes/api-keys.js';
import { monitoringPages } from './routes/monitoring.js';
import { sessionPages, signInPages } from './routes/sign-in.js';
import { usagePages } from './routes/usage.js';
import { vehiclePages } from './routes/vehicles.js';
import { accountPages, teamPages } from './routes/team.js';
import { webhookPages } from './routes/webhooks.js';
import { csrfTokenMatches, fromConsoleOrigin, hashSessionToken, sessionTokenFrom } from './session.js';
import { SignInLimiter } from './sign-in-limiter.js';

// last_seen_at is written at most once a minute per session, so reading pages stays write-free.
const touchIntervalMs = 60_000;

/** Form bodies; a repeated field (checkboxes) becomes an array. */
function parseForm(body: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const existing = fields[name];
    fields[name] = existing === undefined ? value : [existing, value].flat();
  }
  return fields;
}

function isPageRequest(request: FastifyRequest): boolean {
  return request.method === 'GET' && !request.routeOptions.config.consoleData;
}

export async function consolePlugin(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.setErrorHandler(sendConsoleError);
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_request, body, done) => done(null, parseForm(body as string)),
  );
  const policies = consolePolicies(deps.config.consoleMapTiles);
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('content-security-policy', request.routeOptions.config.consoleMap ? policies.mapPage : policies.page);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'same-origin');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  // Every POST, sign-in included (login CSRF), must come from a console page.
  app.addHook('onRequest', async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && !fromConsoleOrigin(request)) {
      throw new AppError('FORBIDDEN');
    }
  });

  app.get(
    '/console/assets/:name',
    { schema: { hide: true, params: { type: 'object', properties: { name: { type: 'string', maxLength: 50 } } } } },
    async (request, reply) => {
      const asset = assets.get((request.params as { name: string }).name);
      if (!asset) throw new AppError('NOT_FOUND', 'no such console asset');
      const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
      reply
        .type(asset.contentType)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding')
        .header('etag', `"${asset.version}"`);
      if (gzip) reply.header('content-encoding', 'gzip');
      return reply.send(gzip ? asset.gzipped : asset.body);
    },
  );

  const limiter = new SignInLimiter(
    deps.redis,
    deps.config.redisPrefix,
    {
      failuresPerEmail: deps.config.consoleSignInFailuresPerEmail,
      failuresPerAddress: deps.config.consoleSignInFailuresPerAddress,
      windowMs: deps.config.consoleSignInWindowMs,
    },
    deps.log,
  );
  const lifetime = { idleMs: deps.config.consoleSessionIdleMs, absoluteMs: deps.config.consoleSessionAbsoluteMs };
  await app.register(signInPages, {
    pool: deps.pool,
    limiter,
    signIns: deps.metrics.consoleSignIns,
    lifetime,
    now: deps.now,
  });

  await app.register(async (signedIn) => {
    signedIn.addHook('onRequest', async (request, reply) => {
      const token = sessionTokenFrom(request);
      const now = deps.now();
      const session = token ? await findConsoleSession(deps.pool, hashSessionToken(token), lifetime, now) : null;
      if (!session) {
        if (isPageRequest(request)) return reply.redirect('/console/sign-in', 303);
        throw new AppError('UNAUTHORIZED', 'the console session has ended: sign in again');
      }
      request.consoleSession = session;
      if (session.lastSeenAt.getTime() < now.getTime() - touchIntervalMs) {
        await touchConsoleSession(deps.pool, session.id, now);
      }
    });
    signedIn.addHook('preValidation', async (request) => {
      if (request.method === 'GET' || request.method === 'HEAD') return;
      const token = (request.body as Record<string, unknown> | undefined)?._csrf;
      if (!csrfTokenMatches(token, request.consoleSession.csrfToken)) {
        throw new AppError(
          'FORBIDDEN',
          'refused: the form is stale or did not come from this console; reload the page',
        );
      }
    });
    await signedIn.register(sessionPages, { pool: deps.pool });
    await signedIn.register(vehiclePages, {
      pool: deps.pool,
      map: { tiles: deps.config.consoleMapTiles, attribution: deps.config.consoleMapAttribution },
    });
    await signedIn.register(apiKeyPages, deps);
    await signedIn.register(webhookPages, deps);
    await signedIn.register(monitoringPages, deps);
    await signedIn.register(usagePages, deps);
    await signedIn.register(activityPages, deps);
    await signedIn.register(accountPages, deps);
    await signedIn.register(teamPages, deps);
  });
}
