/** API keys: create (shown once), list with prefix and last use, revoke after a confirmation. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RedisConnection } from '../../queue/connection.js';
import { broadcastRevocation, type ApiKeyCache } from '../../api/api-key-cache.js';
import { isRecordId } from '../../api/schemas/common.js';
import {
  findActiveCompanyApiKey,
  insertApiKey,
  listApiKeys,
  revokeCompanyApiKey,
  type ApiKeyRecord,
} from '../../db/api-keys.js';
import type { Pool } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import { generateApiKey } from '../../security/api-keys.js';
import { viewer } from '../viewer.js';
import { apiKeysPage, revokeConfirmPage } from '../views/api-keys.js';
import { Form, IdParams } from './forms.js';

const CreateKeyForm = Form({ name: Type.Optional(Type.String({ maxLength: 200 })) });
const RevokeForm = Form({});

export const apiKeyPages: FastifyPluginAsyncTypebox<{
  pool: Pool;
  redis: RedisConnection;
  keyCache: ApiKeyCache;
}> = async (app, deps) => {
  async function requireKey(companyId: string, id: string): Promise<ApiKeyRecord> {
    const key = isRecordId(id) ? await findActiveCompanyApiKey(deps.pool, companyId, id) : null;
    if (!key) throw notFound('API key');
    return key;
  }

  app.get(
    '/console/api-keys',
    { schema: { hide: true, querystring: Type.Object({ revoked: Type.Optional(Type.String({ maxLength: 200 })) }) } },
    async (request, reply) => {
      const keys = await listApiKeys(deps.pool, request.consoleSession.companyId);
      const { revoked } = request.query;
      const notice = revoked ? `Revoked ${revoked}. Calls with it now answer 401.` : null;
      return reply
        .type('text/html; charset=utf-8')
        .send(apiKeysPage(viewer(request), { keys, created: null, notice, error: null }));
    },
  );

  // Answers the page itself (not a redirect): the new key must appear exactly once, and only to this response.
  app.post('/console/api-keys', { schema: { hide: true, body: CreateKeyForm } }, async (request, reply) => {
    const { companyId } = request.consoleSession;
    const name = request.body.name?.trim() || null;
    const generated = generateApiKey();
    await insertApiKey(deps.pool, companyId, name, generated.prefix, generated.hash);
    const keys = await listApiKeys(deps.pool, companyId);
    return reply
      .code(201)
      .type('text/html; charset=utf-8')
      .send(
        apiKeysPage(viewer(request), {
          keys,
          created: { name, key: generated.key },
          notice: `Created ${name ?? 'a key'}.`,
          error: null,
        }),
      );
  });

  app.get('/console/api-keys/:id/revoke', { schema: { hide: true, params: IdParams } }, async (request, reply) => {
    const key = await requireKey(request.consoleSession.companyId, request.params.id);
    return reply.type('text/html; charset=utf-8').send(revokeConfirmPage(viewer(request), key));
  });

  app.post(
    '/console/api-keys/:id/revoke',
    { schema: { hide: true, params: IdParams, body: RevokeForm } },
    async (request, reply) => {
      const { id } = request.params;
      const key = isRecordId(id) ? await revokeCompanyApiKey(deps.pool, request.consoleSession.companyId, id) : null;
      if (!key) throw notFound('API key');
      // As the operator API does: this process forgets it now, the others when the broadcast reaches them.
      deps.keyCache.evict(key.id);
      await broadcastRevocation(deps.redis, deps.keyCache.channel, key.id).catch((err: unknown) =>
        request.log.warn(
          { err },
          'key revoked but the revocation broadcast failed; other processes drop it within 30 s',
        ),
      );
      const label = `${key.name ?? 'the key'} (${key.keyPrefix}…)`;
      return reply.redirect(`/console/api-keys?revoked=${encodeURIComponent(label)}`, 303);
    },
  );
};
