/** Operator API: company users of the developer console (docs/operator-api.md, docs/console.md). */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  consoleRoles,
  disableConsoleUser,
  insertConsoleUser,
  listCompanyConsoleUsers,
} from '../../../db/console-users.js';
import type { Pool } from '../../../db/pool.js';
import { invalidRequest, notFound } from '../../../errors.js';
import { hashPassword, minPasswordLength } from '../../../security/passwords.js';
import {
  Envelope,
  ErrorEnvelope,
  Nullable,
  PathId,
  StringEnum,
  Text,
  Timestamp,
  maxLength,
  ok,
} from '../../../web/schemas.js';
import { isRecordId } from '../../../domain/ids.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany } from './shared.js';
import { presentUser } from '../../../presenters/console-user.js';
import { operatorActor } from '../../../audit/record.js';
import { changeRole } from '../../../console-users/team-actions.js';

const User = Type.Object({
  id: Type.String(),
  company_id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: StringEnum(consoleRoles),
  created_at: Timestamp,
  disabled_at: Nullable(Timestamp),
});

const UserCreate = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: maxLength.email }),
    name: Text('name', { minLength: 1 }),
    role: Type.Optional(
      StringEnum(consoleRoles, {
        description: 'admin (the default: manages the team in the console) or developer.',
      }),
    ),
    password: Type.String({
      minLength: minPasswordLength,
      maxLength: 1024,
      description: `At least ${minPasswordLength} characters; never echoed, stored as a scrypt hash.`,
    }),
  },
  { additionalProperties: false },
);

const RoleChange = Type.Object(
  { role: StringEnum(consoleRoles, { description: 'admin (manages the team in the console) or developer.' }) },
  { additionalProperties: false },
);

export const userAdminRoutes: FastifyPluginAsyncTypebox<{ pool: Pool }> = async (app, deps) => {
  app.post(
    '/companies/:company_id/users',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateUser',
        summary: 'Create a console user of the company (the password is never echoed)',
        security: adminSecurity,
        params: CompanyParams,
        body: UserCreate,
        response: { 201: Envelope(User), ...adminErrors },
      },
    },
    async (request, reply) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const { body } = request;
      const user = await insertConsoleUser(deps.pool, company.id, {
        email: body.email,
        name: body.name,
        passwordHash: await hashPassword(body.password),
        role: body.role ?? 'admin',
      });
      if (!user) throw invalidRequest([{ field: 'email', message: 'is already used by another console user' }]);
      return reply.code(201).send(ok(presentUser(user)));
    },
  );

  app.get(
    '/companies/:company_id/users',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListUsers',
        summary: "The company's console users, live ones first, then by email",
        security: adminSecurity,
        params: CompanyParams,
        response: { 200: Envelope(Type.Array(User)), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      return ok((await listCompanyConsoleUsers(deps.pool, company.id)).map(presentUser));
    },
  );

  // The console Team page's action (src/console-users/): the same last-admin guard, and the same
  // audit row, with the operator as its actor.
  app.patch(
    '/companies/:company_id/users/:user_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminChangeUserRole',
        summary: "Change a live console user's role; 409 when it would leave the company without an admin",
        security: adminSecurity,
        params: Type.Object({ company_id: PathId, user_id: PathId }),
        body: RoleChange,
        response: { 200: Envelope(User), ...adminErrors, 409: ErrorEnvelope },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const userId = request.params.user_id;
      if (!isRecordId(userId)) throw notFound('user');
      return ok(presentUser(await changeRole(deps.pool, company.id, operatorActor, userId, request.body.role)));
    },
  );

  app.delete(
    '/users/:user_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminDisableUser',
        summary: 'Disable a console user; their sessions end at once',
        security: adminSecurity,
        params: Type.Object({ user_id: PathId }),
        response: { 200: Envelope(User), ...adminErrors },
      },
    },
    async (request) => {
      const userId = request.params.user_id;
      const user = isRecordId(userId) ? await disableConsoleUser(deps.pool, userId) : null;
      if (!user) throw notFound('user');
      return ok(presentUser(user));
    },
  );
};
