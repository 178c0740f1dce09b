/** Operator API: the dispatch roster (shops and technicians the assistant may propose). */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Pool } from '../../../db/pool.js';
import {
  deactivateRosterMember,
  findRosterMemberCompanyId,
  insertRosterMember,
  listRoster,
} from '../../../db/runs-stage.js';
import { Envelope, Nullable, PathId, StringEnum, Text, maxItems, ok } from '../../../web/schemas.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany, requireOwner } from './shared.js';

const RosterMember = Type.Object({
  id: Type.String(),
  type: Type.String(),
  name: Type.String(),
  skills: Type.Array(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  capacity: Type.Integer(),
  active: Type.Boolean(),
});

const RosterBody = Type.Object(
  {
    type: StringEnum(['shop', 'technician']),
    name: Text('name', { minLength: 1 }),
    skills: Type.Array(Text('code', { minLength: 1 }), {
      maxItems,
      description: 'Run item types it can do (oil_change, inspection, …).',
    }),
    latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
    longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
    capacity: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, description: 'Open runs it can take at once (default 5).' }),
    ),
  },
  { additionalProperties: false },
);

export const rosterAdminRoutes: FastifyPluginAsyncTypebox<{ pool: Pool }> = async (app, deps) => {
  app.post(
    '/companies/:company_id/roster',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminAddRosterMember',
        summary: 'Add a shop or technician to the dispatch roster',
        security: adminSecurity,
        params: CompanyParams,
        body: RosterBody,
        response: { 201: Envelope(RosterMember), ...adminErrors },
      },
    },
    async (request, reply) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const { body } = request;
      const member = await insertRosterMember(deps.pool, company.id, {
        type: body.type,
        name: body.name,
        skills: body.skills,
        latitude: body.latitude ?? null,
        longitude: body.longitude ?? null,
        capacity: body.capacity ?? 5,
      });
      return reply.code(201).send(ok(member));
    },
  );

  app.get(
    '/companies/:company_id/roster',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListRoster',
        summary: 'The dispatch roster',
        security: adminSecurity,
        params: CompanyParams,
        response: { 200: Envelope(Type.Array(RosterMember)), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      return ok(await listRoster(deps.pool, company.id));
    },
  );

  app.delete(
    '/roster/:member_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminRemoveRosterMember',
        summary: 'Take a member off the roster (no new proposals)',
        security: adminSecurity,
        params: Type.Object({ member_id: PathId }),
        response: { 200: Envelope(RosterMember), ...adminErrors },
      },
    },
    async (request) => {
      const id = request.params.member_id;
      await requireOwner(deps.pool, id, 'roster member', findRosterMemberCompanyId);
      return ok((await deactivateRosterMember(deps.pool, id))!);
    },
  );
};
