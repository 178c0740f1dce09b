/**
 * POST /ingest/v1/:provider/:connectionId — provider pushes, each verified the provider's own way
 * (DESIGN §6), committed byte for byte to the inbox before 202 is answered. Traccar (OsmAnd)
 * devices cannot sign: their URL carries a device token, /ingest/v1/traccar/:connectionId/:token,
 * by GET or POST. Nothing is written when verification or parsing fails.
 */
import Type from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { adapters, isProviderId } from '../../../providers/index.js';
import { isSmartcarVerify, smartcarVerifyChallenge } from '../../../providers/smartcar.js';
import type { PushRequest } from '../../../providers/types.js';
import { insertInboxRow } from '../../db/inbox.js';
import type { Pool } from '../../db/pool.js';
import { AppError, invalidRequest, notFound } from '../../errors.js';
import type { ConnectionCache } from '../../ingest/connection-cache.js';
import { enqueueInboxRows } from '../../ingest/inbox-queue.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics.js';
import type { Queues } from '../../queue/queues.js';
import { Envelope, ErrorEnvelope, PathId, Timestamp, isRecordId, meta } from '../schemas/common.js';

export interface IngestDeps {
  pool: Pool;
  queues: Queues;
  connections: ConnectionCache;
  metrics: Metrics;
  log: Logger;
  bodyLimitBytes: number;
}

const Accepted = Envelope(Type.Object({ inbox_id: Type.Integer(), received_at: Timestamp }));
const responses = {
  200: Type.Object({ challenge: Type.String() }, { description: 'Smartcar VERIFY challenge answer.' }),
  202: Accepted,
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  404: ErrorEnvelope,
  413: ErrorEnvelope,
  500: ErrorEnvelope,
};

function contentTypeOf(request: FastifyRequest): string | null {
  return request.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? null;
}

function looksLikeJson(contentType: string | null, body: string): boolean {
  return contentType?.includes('json') === true || /^\s*[[{]/.test(body);
}

/** The "unparseable" check of a verified push: JSON must parse; an OsmAnd form or query must name its device. */
function checkPushBody(provider: string, contentType: string | null, body: string): { ok: true } | { ok: false; message: string } {
  if (looksLikeJson(contentType, body)) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return { ok: false, message: 'body is not valid JSON' };
    }
    // An OsmAnd JSON push names its device as device_id; without it the payload can never be stored against one.
    if (provider === 'traccar' && !(json && typeof json === 'object' && 'device_id' in json)) return { ok: false, message: 'device_id is required' };
    return { ok: true };
  }
  if (provider === 'traccar') {
    const params = new URLSearchParams(body);
    return params.get('id') || params.get('deviceid') ? { ok: true } : { ok: false, message: 'id (or deviceid) is required' };
  }
  return { ok: false, message: `${provider} pushes JSON` };
}

export async function ingestRoutes(app: FastifyInstance, deps: IngestDeps): Promise<void> {
  // Signatures cover the exact bytes received, so bodies stay raw here (no JSON parser in front).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes }, (_request, body, done) => done(null, body));

  async function accept(request: FastifyRequest, reply: FastifyReply, provider: string, connectionId: string, token: string | null) {
    if (!isProviderId(provider) || !isRecordId(connectionId)) throw notFound('provider connection');
    const connection = await deps.connections.get(connectionId);
    if (!connection || !connection.active || connection.provider !== provider) throw notFound('provider connection');
    const adapter = adapters[provider];
    if (!adapter.verifyPush) throw invalidRequest([{ field: 'provider', message: `${provider} does not push; its data is pulled` }]);

    const rawBody = request.method === 'GET' ? Buffer.from(request.url.split('?')[1] ?? '') : ((request.body as Buffer | undefined) ?? Buffer.alloc(0));
    const push: PushRequest = {
      method: request.method,
      headers: request.headers as Record<string, string | undefined>,
      query: { ...(request.query as Record<string, string>), ...(token ? { token } : {}) },
      rawBody,
    };
    const contentType = request.method === 'GET' ? 'application/x-www-form-urlencoded' : contentTypeOf(request);
    const body = rawBody.toString('utf8');

    // Without a push secret (a pull-only connection) nobody can be verified: an empty HMAC key is no key.
    const secret = connection.config.webhook_secret;
    if (!secret) throw new AppError('UNAUTHORIZED', 'this connection does not accept pushes (it has no webhook secret)');

    // Smartcar proves the callback URL before sending data: answer the challenge, store nothing.
    // The answer is an HMAC under the same key as SC-Signature, so only token-like challenges are
    // answered: a JSON event body can never be one, and the answer cannot sign a forged event.
    if (provider === 'smartcar') {
      const challenge = isSmartcarVerify(body);
      if (challenge !== null) {
        if (!/^[A-Za-z0-9_-]{1,128}$/.test(challenge)) throw invalidRequest([{ field: 'data.challenge', message: 'is not a challenge token' }]);
        return reply.code(200).send(smartcarVerifyChallenge(challenge, secret));
      }
    }
    const verified = adapter.verifyPush(push, secret, new Date());
    if (!verified.ok) {
      throw new AppError('UNAUTHORIZED', verified.reason === 'stale_timestamp' ? 'signature timestamp is too old or in the future' : 'missing or invalid signature');
    }
    // Parsed only once the sender is verified: an anonymous body never costs a full parse.
    const checked = checkPushBody(provider, contentType, body);
    if (!checked.ok) throw invalidRequest([{ field: 'body', message: checked.message }]);

    const row = await insertInboxRow(deps.pool, { connectionId, provider, contentType, payload: body, cascade: true, refreshId: null });
    deps.metrics.inboxAccepted.inc({ provider });
    // The row is durable now; if Redis is away the recovery sweep enqueues it later.
    await enqueueInboxRows(deps.queues, [row.id]).catch((err: unknown) =>
      deps.log.warn({ err: (err as Error).message, inboxId: row.id }, 'could not enqueue an accepted push'),
    );
    return reply.code(202).send({ success: true, data: { inbox_id: row.id, received_at: row.receivedAt.toISOString() }, meta: meta(null) });
  }

  const schema = (summary: string, params: ReturnType<typeof Type.Object>) => ({
    tags: ['Ingestion'],
    summary,
    params,
    response: responses,
  });

  app.post('/:provider/:connectionId', {
    bodyLimit: deps.bodyLimitBytes,
    schema: schema('Provider push (signed the provider\'s way); 202 once stored', Type.Object({ provider: PathId, connectionId: PathId })),
  }, async (request, reply) => {
    const { provider, connectionId } = request.params as { provider: string; connectionId: string };
    return accept(request, reply, provider, connectionId, null);
  });

  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/traccar/:connectionId/:token',
      bodyLimit: deps.bodyLimitBytes,
      schema: schema('Traccar OsmAnd device push; the URL carries the device token', Type.Object({ connectionId: PathId, token: PathId })),
      handler: async (request, reply) => {
        const { connectionId, token } = request.params as { connectionId: string; token: string };
        return accept(request, reply, 'traccar', connectionId, token);
      },
    });
  }
}
