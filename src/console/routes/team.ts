/**
 * Team (admins only; anyone else gets 403 and never sees the link) and Change password (every
 * user). The actions live in src/console-users/team-actions.ts.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { userActor } from '../../audit/record.js';
import { listCompanyConsoleUsers } from '../../db/console-users.js';
import { changeOwnPassword, changeRole, disableTeamMember, inviteUser } from '../../console-users/team-actions.js';
import { AppError } from '../../errors.js';
import { minPasswordLength } from '../../security/passwords.js';
import { isRecordId } from '../../domain/ids.js';
import { asRefusal, flashUrl, putFlash, redirectRefused, takeFlash } from '../flash.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import { passwordPage, teamPage } from '../views/team.js';
import { Form, IdParams } from './forms.js';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('developer')]);
const InviteForm = Form({
  email: Type.String({ maxLength: 254 }),
  name: Type.String({ maxLength: 200 }),
  role: Role,
});
const RoleForm = Form({ role: Role });
const DisableForm = Form({});
const PasswordForm = Form({ current: Type.String({ maxLength: 1024 }), next: Type.String({ maxLength: 1024 }) });

const FlashQuery = Type.Object({
  created: Type.Optional(Type.String({ maxLength: 100 })),
  refused: Type.Optional(Type.String({ maxLength: 100 })),
  done: Type.Optional(Type.String({ maxLength: 300 })),
});

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const teamPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.addHook('onRequest', async (request) => {
    if (request.consoleSession.role !== 'admin') throw new AppError('FORBIDDEN', 'only admins manage the team');
  });

  app.get('/console/team', { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => {
    const { created: createdId, refused: refusedId, done } = request.query;
    const invited = await takeFlash(deps, request, 'created', 'team', createdId);
    const refused = await takeFlash(deps, request, 'refused', 'team', refusedId);
    let notice: string | null = done ?? null;
    if (invited) notice = `Invited ${invited.email}.`;
    else if (createdId) notice = 'The temporary password was shown once and is not shown again.';
    const members = await listCompanyConsoleUsers(deps.pool, request.consoleSession.companyId);
    const draft = refused?.draft ?? { email: '', name: '', role: 'developer' };
    return reply
      .type('text/html; charset=utf-8')
      .send(teamPage(viewer(request), { members, invited, notice, error: refused?.error ?? null, draft }));
  });

  app.post('/console/team', { schema: { hide: true, body: InviteForm } }, async (request, reply) => {
    const session = request.consoleSession;
    const email = request.body.email.trim();
    const name = request.body.name.trim();
    const { role } = request.body;
    let flashId = '';
    const outcome =
      !emailShape.test(email) || name === ''
        ? new AppError('INVALID_REQUEST', !emailShape.test(email) ? 'enter an email address' : 'enter a name')
        : await inviteUser(deps.pool, session.companyId, userActor(session), { email, name, role }, async (tx, i) => {
            flashId = await putFlash(tx, deps.config.secretsKey, session.id, 'created', 'team', {
              email: i.user.email,
              temporaryPassword: i.temporaryPassword,
            });
          }).catch(asRefusal);
    if (outcome instanceof AppError) {
      const error = `Not invited: ${outcome.message}.`;
      return redirectRefused(deps, request, reply, 'team', { error, draft: { email, name, role } });
    }
    return reply.redirect(flashUrl('created', 'team', flashId), 303);
  });

  app.post(
    '/console/team/:id/disable',
    { schema: { hide: true, params: IdParams, body: DisableForm } },
    async (request, reply) => {
      const session = request.consoleSession;
      const { id } = request.params;
      if (!isRecordId(id)) throw new AppError('NOT_FOUND', 'user not found');
      const outcome = await disableTeamMember(deps.pool, session.companyId, userActor(session), id).catch(asRefusal);
      if (outcome instanceof AppError) {
        return redirectRefused(deps, request, reply, 'team', {
          error: `Not disabled: ${outcome.message}.`,
          draft: null,
        });
      }
      return reply.redirect(`/console/team?done=${encodeURIComponent(`Disabled ${outcome.email}.`)}`, 303);
    },
  );

  app.post(
    '/console/team/:id/role',
    { schema: { hide: true, params: IdParams, body: RoleForm } },
    async (request, reply) => {
      const session = request.consoleSession;
      const { id } = request.params;
      if (!isRecordId(id)) throw new AppError('NOT_FOUND', 'user not found');
      const outcome = await changeRole(deps.pool, session.companyId, userActor(session), id, request.body.role).catch(
        asRefusal,
      );
      if (outcome instanceof AppError) {
        return redirectRefused(deps, request, reply, 'team', {
          error: `Not changed: ${outcome.message}.`,
          draft: null,
        });
      }
      const done = `${outcome.email} is now ${outcome.role === 'admin' ? 'an admin' : 'a developer'}.`;
      return reply.redirect(`/console/team?done=${encodeURIComponent(done)}`, 303);
    },
  );
};

export const accountPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.get('/console/account', { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => {
    const refused = await takeFlash(deps, request, 'refused', 'account', request.query.refused);
    const notice = request.query.done ? 'Password changed. Your other sessions were signed out.' : null;
    return reply
      .type('text/html; charset=utf-8')
      .send(passwordPage(viewer(request), { notice, error: refused?.error ?? null }));
  });

  app.post('/console/account', { schema: { hide: true, body: PasswordForm } }, async (request, reply) => {
    const { current, next } = request.body;
    const outcome =
      next.length < minPasswordLength
        ? new AppError('INVALID_REQUEST', `the new password needs at least ${minPasswordLength} characters`)
        : await changeOwnPassword(deps.pool, request.consoleSession, current, next).catch(asRefusal);
    if (outcome instanceof AppError) {
      return redirectRefused(deps, request, reply, 'account', {
        error: `Not changed: ${outcome.message}.`,
        draft: null,
      });
    }
    return reply.redirect('/console/account?done=1', 303);
  });
};
