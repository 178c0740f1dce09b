/** Operator API: companies and their API keys. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RedisConnection } from '../../../queue/connection.js';
import type { Config } from '../../../config.js';
import type { Pool } from '../../../db/pool.js';
import { listApiKeys, revokeApiKey } from '../../../db/api-keys.js';
import { insertCompany, listCompanies, updateCompany } from '../../../db/companies.js';
import { AppError, notFound } from '../../../errors.js';
import { announceRevocation, createApiKey } from '../../../api-keys/api-key-actions.js';
import type { ApiKeyCache } from '../../../api-keys/api-key-cache.js';
import { presentApiKey } from '../../../presenters/api-key.js';
import { presentCompany } from '../../../presenters/company.js';
import { ApiKey, ApiKeyCreate, Company, CompanyCreate, CreatedApiKey, ExternalIds } from '../../schemas/admin.js';
import { Envelope, ErrorEnvelope, PageOnlyQuery, PathId, Text, ok } from '../../../web/schemas.js';
import { isRecordId } from '../../../domain/ids.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany } from './shared.js';

const CompanyPatch = Type.Object(
  {
    name: Type.Optional(Text('name', { minLength: 1 })),
    external_ids: Type.Optional(ExternalIds),
    settings: Type.Optional(
      Type.Object(
        {
          service_requests_from_health: Type.Optional(
            Type.Boolean({
              description: 'Open service requests when health turns critical or maintenance is overdue (default true).',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

const CompanyWithSettings = Type.Object({
  ...Company.properties,
  settings: Type.Object({}, { additionalProperties: true }),
});

export const companyAdminRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  config: Config;
  redis: RedisConnection;
  keyCache: ApiKeyCache;
}> = async (app, deps) => {
  app.post(
    '/companies',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateCompany',
        summary: 'Create a company',
        security: adminSecurity,
        body: CompanyCreate,
        response: { 201: Envelope(Company), ...adminErrors },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const company = await insertCompany(deps.pool, body.name, body.external_ids ?? {});
      return reply.code(201).send(ok(presentCompany(company)));
    },
  );

  app.get(
    '/companies',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListCompanies',
        summary: 'List companies',
        security: adminSecurity,
        querystring: PageOnlyQuery,
        response: { 200: Envelope(Type.Array(Company)), ...adminErrors },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const companies = await listCompanies(deps.pool, limit, offset);
      return ok(companies.map(presentCompany), { limit, offset, total: null });
    },
  );

  app.get(
    '/companies/:company_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminGetCompany',
        summary: 'Get a company',
        security: adminSecurity,
        params: CompanyParams,
        response: { 200: Envelope(Company), ...adminErrors },
      },
    },
    async (request) => {
      return ok(presentCompany(await requireCompany(deps.pool, request.params.company_id)));
    },
  );

  app.patch(
    '/companies/:company_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminUpdateCompany',
        summary: "Change a company's name, external ids or settings",
        security: adminSecurity,
        params: CompanyParams,
        body: CompanyPatch,
        response: { 200: Envelope(CompanyWithSettings), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const { body } = request;
      const updated = (await updateCompany(deps.pool, company.id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.external_ids !== undefined ? { externalIds: body.external_ids } : {}),
        ...(body.settings !== undefined ? { settings: body.settings } : {}),
      }))!;
      return ok({ ...presentCompany(updated), settings: updated.settings });
    },
  );

  app.post(
    '/companies/:company_id/api-keys',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateApiKey',
        summary: 'Create an API key (the key is shown once)',
        description: '409 LIMIT_REACHED when the company already has API_KEYS_PER_COMPANY live (unrevoked) keys.',
        security: adminSecurity,
        params: CompanyParams,
        body: ApiKeyCreate,
        response: { 201: Envelope(CreatedApiKey), 409: ErrorEnvelope, ...adminErrors },
      },
    },
    async (request, reply) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const { record, key } = await createApiKey(deps, company.id, request.body.name ?? null);
      return reply.code(201).send(ok({ ...presentApiKey(record), key }));
    },
  );

  app.get(
    '/companies/:company_id/api-keys',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListApiKeys',
        summary: 'List API keys (never the keys themselves)',
        security: adminSecurity,
        params: CompanyParams,
        response: { 200: Envelope(Type.Array(ApiKey)), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      return ok((await listApiKeys(deps.pool, company.id)).map(presentApiKey));
    },
  );

  app.delete(
    '/api-keys/:key_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminRevokeApiKey',
        summary: 'Revoke an API key; it answers 401 from then on',
        security: adminSecurity,
        params: Type.Object({ key_id: PathId }),
        response: { 200: Envelope(ApiKey), 503: ErrorEnvelope, ...adminErrors },
      },
    },
    async (request) => {
      const keyId = request.params.key_id;
      const record = isRecordId(keyId) ? await revokeApiKey(deps.pool, keyId) : null;
      if (!record) throw notFound('API key');
      try {
        await announceRevocation(deps, record.id);
      } catch {
        // Revoking again is harmless (revoked_at keeps its first value) and broadcasts again.
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'the key is revoked, but other API processes could not be told and may accept it for up to 30 s; retry to broadcast again',
        );
      }
      return ok(presentApiKey(record));
    },
  );
};
