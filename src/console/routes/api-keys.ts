/** API keys: create (shown once), list with prefix and last use, revoke after a confirmation. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { announceRevocation, createApiKey, revokeCompanyKey } from '../../api-keys/api-key-actions.js';
import { recordAudit, userActor } from '../../audit/record.js';
import { isRecordId } from '../../domain/ids.js';
import { findActiveCompanyApiKey, listApiKeys, type ApiKeyRecord } from '../../db/api-keys.js';
import { AppError, notFound } from '../../errors.js';
import { asRefusal, flashUrl, putFlash, redirectRefused, takeFlash } from '../flash.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import { apiKeysPage, revokeConfirmPage, type ApiKeysView } from '../views/api-keys.js';
import { Form, IdParams } from './forms.js';

const CreateKeyForm = Form({ name: Type.Optional(Type.String({ maxLength: 200 })) });
const RevokeForm = Form({});

const KeysQuery = Type.Object({
  revoked: Type.Optional(Type.String({ maxLength: 200 })),
  created: Type.Optional(Type.String({ maxLength: 100 })),
  refused: Type.Optional(Type.String({ maxLength: 100 })),
});

export const apiKeyPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  async function requireKey(companyId: string, id: string): Promise<ApiKeyRecord> {
    const key = isRecordId(id) ? await findActiveCompanyApiKey(deps.pool, companyId, id) : null;
    if (!key) throw notFound('API key');
    return key;
  }

  async function render(request: FastifyRequest, view: Omit<ApiKeysView, 'keys'>) {
    const keys = await listApiKeys(deps.pool, request.consoleSession.companyId);
    return apiKeysPage(viewer(request), { ...view, keys });
  }

  app.get('/console/api-keys', { schema: { hide: true, querystring: KeysQuery } }, async (request, reply) => {
    const { revoked, created: createdId, refused: refusedId } = request.query;
    const created = await takeFlash(deps, request, 'created', 'api-keys', createdId);
    const refused = await takeFlash(deps, request, 'refused', 'api-keys', refusedId);
    let notice: string | null = null;
    if (created) notice = `Created ${created.name ?? 'a key'}.`;
    else if (createdId)
      notice = 'The new key was shown once and is not shown again. If it was not copied, revoke it and create another.';
    else if (revoked) notice = `Revoked ${revoked}. Calls with it now answer 401.`;
    const view = { created, notice, error: refused?.error ?? null, draftName: refused?.draft.name ?? '' };
    return reply.type('text/html; charset=utf-8').send(await render(request, view));
  });

  // Answers 303 to the list, which shows the new key once, or the refusal once (src/console/flash.ts):
  // a reload creates nothing, even once there is room again.
  app.post('/console/api-keys', { schema: { hide: true, body: CreateKeyForm } }, async (request, reply) => {
    const { companyId, id: sessionId } = request.consoleSession;
    const name = request.body.name?.trim() || null;
    let flashId = '';
    const actor = userActor(request.consoleSession);
    const outcome = await createApiKey(deps, companyId, name, async (tx, created) => {
      await recordAudit(tx, companyId, actor, 'api_key.created', { type: 'api_key', id: created.record.id });
      flashId = await putFlash(tx, deps.config.secretsKey, sessionId, 'created', 'api-keys', {
        name,
        key: created.key,
      });
    }).catch(asRefusal);
    if (outcome instanceof AppError) {
      const error = `Not created: ${outcome.message}.`;
      return redirectRefused(deps, request, reply, 'api-keys', { error, draft: { name: name ?? '' } });
    }
    return reply.redirect(flashUrl('created', 'api-keys', flashId), 303);
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
      const session = request.consoleSession;
      const key = isRecordId(id) ? await revokeCompanyKey(deps.pool, session.companyId, userActor(session), id) : null;
      if (!key) throw notFound('API key');
      await announceRevocation(deps, key.id).catch((err: unknown) =>
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
