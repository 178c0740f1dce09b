/**
 * POST /ingest/v1/:provider/:connectionId — provider pushes, committed byte for byte to the inbox
 * before 202 is answered. What differs per provider is the adapter's push rules
 * (providers/types.ts), applied in this order, each before the next looks at the body:
 * 1. verify the signature (or the device token a provider's URL carries:
 *    GET|POST /ingest/v1/:provider/:connectionId/:token, Traccar's OsmAnd devices);
 * 2. the per-connection rate limit, which only verified pushes count;
 * 3. a handshake (Smartcar's VERIFY challenge), answered 200 and stored nowhere;
 * 4. the body check (400 when it can never be stored, e.g. a NUL byte, which Postgres text cannot hold);
 * 5. store once: a push whose replay key was stored within the replay window is answered with
 *    the first push's inbox row (`duplicate: true`) and not stored again.
 * Nothing is written when any step refuses.
 */
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedisConnection } from '../../queue/connection.js';
import { adapters, isProviderId } from '../../../providers/index.js';
import type { PushRequest } from '../../../providers/types.js';
import type { Pool } from '../../db/pool.js';
import { AppError, invalidRequest, notFound } from '../../errors.js';
import type { ConnectionCache } from '../../ingest/connection-cache.js';
import { enqueueInboxRows } from '../../queue/enqueue-ingest.js';
import { storePush } from '../../ingest/push-store.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics.js';
import type { Queues } from '../../queue/queues.js';
import { Envelope, ErrorEnvelope, PathId, Timestamp, ok } from '../../web/schemas.js';
import { isRecordId } from '../../domain/ids.js';
import { enqueueAfterCommit } from '../../queue/after-commit.js';
import { ingestSecurity } from '../openapi.js';

export interface IngestDeps {
  pool: Pool;
  queues: Queues;
  connections: ConnectionCache;
  metrics: Metrics;
  log: Logger;
  bodyLimitBytes: number;
  /** Shares the per-connection push counts between API processes; pushes are not limited while it is down. */
  redis: RedisConnection;
  redisPrefix: string;
  /** INGEST_RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute: number;
}

const Accepted = Envelope(
  Type.Object({
    inbox_id: Type.Integer(),
    received_at: Timestamp,
    duplicate: Type.Boolean({
      description: 'True when this push repeats one stored within the replay window: nothing was stored again.',
    }),
  }),
);
const responses = {
  200: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 200 }), {
    description: "A handshake's answer, e.g. Smartcar's VERIFY: {challenge}.",
  }),
  202: Accepted,
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  404: ErrorEnvelope,
  413: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
};

const PushParams = Type.Object({ provider: PathId, connectionId: PathId });
const TokenPushParams = Type.Object({ provider: PathId, connectionId: PathId, token: PathId });

function contentTypeOf(request: FastifyRequest): string | null {
  return request.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? null;
}

/** The connection a push counts against: both push routes have it as a path parameter. */
function connectionKey(request: FastifyRequest): string {
  const params: unknown = request.params;
  return typeof params === 'object' && params !== null && 'connectionId' in params ? String(params.connectionId) : '';
}

/** The body as received: an OsmAnd GET carries its fix in the query string. */
function rawBodyOf(request: FastifyRequest): Buffer {
  if (request.method !== 'GET') return (request.body as Buffer | undefined) ?? Buffer.alloc(0);
  const query = request.url.indexOf('?');
  return Buffer.from(query < 0 ? '' : request.url.slice(query + 1));
}

export async function ingestRoutes(fastify: FastifyInstance, deps: IngestDeps): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Signatures cover the exact bytes received, so bodies stay raw here (no JSON parser in front).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes }, (_request, body, done) =>
    done(null, body),
  );
  // Applied by hand after verification (global: false): a caller without the secret cannot spend a connection's allowance.
  await app.register(rateLimit, {
    global: false,
    redis: deps.redis,
    nameSpace: `${deps.redisPrefix}:ingest-rate:`,
    skipOnError: true,
  });
  const connectionLimit = app.createRateLimit({
    max: deps.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: connectionKey,
  });

  async function accept(
    request: FastifyRequest,
    reply: FastifyReply,
    params: { provider: string; connectionId: string; token: string | null },
  ) {
    const { provider, connectionId, token } = params;
    if (!isProviderId(provider) || !isRecordId(connectionId)) throw notFound('provider connection');
    const connection = await deps.connections.get(connectionId);
    if (!connection || !connection.active || connection.provider !== provider) throw notFound('provider connection');
    const rules = adapters[provider].push;
    if (!rules) throw invalidRequest([{ field: 'provider', message: `${provider} does not push; its data is pulled` }]);
    // A token in the path is how devices that cannot sign authenticate; other providers have no such URL.
    if (token !== null && !rules.tokenInPath) throw notFound('provider connection');

    // Without a push secret (a pull-only connection) nobody can be verified: an empty HMAC key is no key.
    const secret = connection.config.webhook_secret;
    if (!secret)
      throw new AppError('UNAUTHORIZED', 'this connection does not accept pushes (it has no webhook secret)');
    const push: PushRequest = {
      method: request.method,
      headers: request.headers as Record<string, string | undefined>,
      pathToken: token,
      rawBody: rawBodyOf(request),
    };
    const verified = rules.verify(push, secret, new Date());
    if (!verified.ok) {
      throw new AppError(
        'UNAUTHORIZED',
        verified.reason === 'stale_timestamp'
          ? 'signature timestamp is too old or in the future'
          : 'missing or invalid signature',
      );
    }

    const limit = await connectionLimit(request);
    if (!limit.isAllowed && limit.isExceeded) {
      deps.metrics.pushesNotStored.inc({ provider, reason: 'rate_limited' });
      reply.header('retry-after', String(Math.max(1, limit.ttlInSeconds)));
      throw new AppError(
        'RATE_LIMITED',
        'this connection is over its push rate limit; retry after the Retry-After seconds',
      );
    }

    const handshake = rules.handshake?.(push, secret) ?? null;
    if (handshake) {
      if (!handshake.ok) throw invalidRequest([{ field: handshake.field, message: handshake.message }]);
      return reply.code(200).send(handshake.answer);
    }

    const contentType = request.method === 'GET' ? 'application/x-www-form-urlencoded' : contentTypeOf(request);
    // Postgres text cannot hold a NUL; a JSON body never has a raw one, a form body might.
    if (push.rawBody.includes(0)) throw invalidRequest([{ field: 'body', message: 'contains a NUL byte' }]);
    const body = push.rawBody.toString('utf8');
    const problem = rules.bodyProblem(body, contentType);
    if (problem) throw invalidRequest([{ field: 'body', message: problem }]);

    const stored = await storePush(
      deps.pool,
      { connectionId, provider, contentType, payload: body, cascade: true, refreshId: null },
      rules.replayKey?.(push) ?? null,
    );
    if (stored.duplicate) deps.metrics.pushesNotStored.inc({ provider, reason: 'duplicate' });
    else deps.metrics.inboxAccepted.inc({ provider });
    // A duplicate's earlier row too: a retry is what a provider sends when the process that stored
    // the push died before enqueueing and answering it. A job for a processed row does nothing.
    await enqueueAfterCommit(deps.log, 'ingest.recover', () => enqueueInboxRows(deps.queues, [stored.id]), {
      inboxId: stored.id,
    });
    return reply
      .code(202)
      .send(ok({ inbox_id: stored.id, received_at: stored.receivedAt.toISOString(), duplicate: stored.duplicate }));
  }

  app.post(
    '/:provider/:connectionId',
    {
      bodyLimit: deps.bodyLimitBytes,
      schema: {
        tags: ['Ingestion'],
        operationId: 'ingestPush',
        summary: "Provider push (signed the provider's way); 202 once stored",
        security: ingestSecurity,
        params: PushParams,
        response: responses,
      },
    },
    async (request, reply) => accept(request, reply, { ...request.params, token: null }),
  );

  app.route({
    method: ['GET', 'POST'],
    url: '/:provider/:connectionId/:token',
    bodyLimit: deps.bodyLimitBytes,
    schema: {
      tags: ['Ingestion'],
      operationId: 'ingestDevicePush',
      summary: 'Device push whose URL carries the device token (Traccar OsmAnd), by GET or POST',
      // The token path segment is the credential: OpenAPI has no scheme for a path segment.
      security: [],
      params: TokenPushParams,
      response: responses,
    },
    handler: async (request, reply) => accept(request, reply, request.params),
  });
}
