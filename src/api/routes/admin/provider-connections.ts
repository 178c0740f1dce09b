/** Operator API: provider connections (credentials encrypted at rest, never returned). */
import Type from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { feedProviders } from '../../../../providers/index.js';
import { providerIds, type ProviderId } from '../../../../providers/types.js';
import type { Pool } from '../../../db/pool.js';
import {
  findProviderConnection,
  insertProviderConnection,
  listProviderConnections,
  setConnectionActive,
  type ProviderConnectionRecord,
} from '../../../db/provider-connections.js';
import { listUnmappedVehicles } from '../../../db/vehicle-state.js';
import { invalidRequest, notFound } from '../../../errors.js';
import type { ConnectionCache } from '../../../ingest/connection-cache.js';
import { ingestUrl, prepareConnectionConfig, pullsFeed } from '../../../ingest/connection-config.js';
import type { Queues } from '../../../queue/queues.js';
import { decryptJson, encryptJson } from '../../../security/secrets.js';
import type { ProviderConfig } from '../../../../providers/types.js';
import { Envelope, Nullable, NullableString, PathId, StringEnum, Timestamp, isRecordId, meta } from '../../schemas/common.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany } from './shared.js';

export interface ConnectionAdminDeps {
  pool: Pool;
  queues: Queues;
  connections: ConnectionCache;
  secretsKey: Buffer;
}

const ConnectionBody = Type.Object(
  {
    provider: StringEnum(providerIds),
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    config: Type.Object(
      {
        webhook_secret: Type.Optional(Type.String({ minLength: 8, maxLength: 500 })),
        base_url: Type.Optional(Type.String({ maxLength: 500 })),
        api_token: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
        database: Type.Optional(Type.String({ maxLength: 200 })),
        username: Type.Optional(Type.String({ maxLength: 200 })),
        password: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false, default: {} },
    ),
    pull_interval_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 86_400, description: 'Feed pull period (Samsara, Geotab, Motive); default 60.' })),
  },
  { additionalProperties: false },
);
type ConnectionBody = Type.Static<typeof ConnectionBody>;

const Connection = Type.Object({
  id: Type.String(),
  company_id: Type.String(),
  provider: Type.String(),
  name: NullableString,
  active: Type.Boolean(),
  ingest_url: Nullable(Type.String({ description: 'Where the provider pushes (null for Geotab, which is pulled).' })),
  config_keys: Type.Array(Type.String(), { description: 'Which config entries are set; their values are never returned.' }),
  pull_interval_seconds: Type.Integer(),
  last_pull_at: Nullable(Timestamp),
  last_pull_error: NullableString,
  created_at: Timestamp,
});

const CreatedConnection = Type.Object({
  ...Connection.properties,
  generated_secret: Nullable(Type.String({ description: 'The signing secret or device token we generated; shown once.' })),
});

const ConnectionDetail = Type.Object({
  ...Connection.properties,
  unmapped_vehicles: Type.Array(Type.Object({
    provider_vehicle_id: Type.String(),
    first_seen_at: Timestamp,
    last_seen_at: Timestamp,
    samples_count: Type.Integer(),
  })),
});

function origin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** `created`: the answer to the creation, the one time a Traccar URL (it embeds the device token) is shown. */
function present(record: ProviderConnectionRecord, config: ProviderConfig, request: FastifyRequest, created = false) {
  const url = ingestUrl(origin(request), record.provider as ProviderId, record.id, config);
  return {
    id: record.id,
    company_id: record.companyId,
    provider: record.provider,
    name: record.name,
    active: record.active,
    ingest_url: record.provider === 'traccar' && !created ? null : url,
    config_keys: Object.keys(config).filter((k) => config[k as keyof ProviderConfig]).sort(),
    pull_interval_seconds: record.pullIntervalSeconds,
    last_pull_at: record.lastPullAt?.toISOString() ?? null,
    last_pull_error: record.lastPullError,
    created_at: record.createdAt.toISOString(),
  };
}

const schedulerId = (connectionId: string) => `pull-${connectionId}`;

export async function providerConnectionAdminRoutes(app: FastifyInstance, deps: ConnectionAdminDeps): Promise<void> {
  const ConnectionParams = Type.Object({ connection_id: PathId });

  async function requireConnection(id: string): Promise<ProviderConnectionRecord> {
    const record = isRecordId(id) ? await findProviderConnection(deps.pool, id) : null;
    if (!record) throw notFound('provider connection');
    return record;
  }

  app.post('/companies/:company_id/provider-connections', {
    schema: {
      tags: ['Operator'],
      summary: 'Connect a telematics provider; secrets are encrypted and never returned',
      security: adminSecurity,
      params: CompanyParams,
      body: ConnectionBody,
      response: { 201: Envelope(CreatedConnection), ...adminErrors },
    },
  }, async (request, reply) => {
    const company = await requireCompany(deps.pool, (request.params as { company_id: string }).company_id);
    const body = request.body as ConnectionBody;
    const prepared = prepareConnectionConfig(body.provider, body.config);
    if (!prepared.ok) throw invalidRequest(prepared.errors);
    const record = await insertProviderConnection(deps.pool, {
      companyId: company.id,
      provider: body.provider,
      name: body.name ?? null,
      configCiphertext: encryptJson(deps.secretsKey, prepared.value.config),
      pullIntervalSeconds: body.pull_interval_seconds ?? 60,
    });
    if (pullsFeed(body.provider, prepared.value.config, feedProviders)) {
      await deps.queues.schedule('pull.feed', record.pullIntervalSeconds * 1000, { connectionId: record.id }, schedulerId(record.id));
    }
    const data = {
      ...present(record, prepared.value.config, request, true),
      generated_secret: prepared.value.generatedSecret,
    };
    return reply.code(201).send({ success: true, data, meta: meta(null) });
  });

  app.get('/companies/:company_id/provider-connections', {
    schema: { tags: ['Operator'], summary: "List a company's provider connections", security: adminSecurity, params: CompanyParams, response: { 200: Envelope(Type.Array(Connection)), ...adminErrors } },
  }, async (request) => {
    const company = await requireCompany(deps.pool, (request.params as { company_id: string }).company_id);
    const records = await listProviderConnections(deps.pool, company.id);
    const data = records.map((r) => present(r, decryptJson<ProviderConfig>(deps.secretsKey, r.configCiphertext), request));
    return { success: true, data, meta: meta(null) };
  });

  app.get('/provider-connections/:connection_id', {
    schema: {
      tags: ['Operator'],
      summary: 'A provider connection with its pull status and the vehicles it reports that are not mapped',
      security: adminSecurity,
      params: ConnectionParams,
      response: { 200: Envelope(ConnectionDetail), ...adminErrors },
    },
  }, async (request) => {
    const record = await requireConnection((request.params as { connection_id: string }).connection_id);
    const unmapped = await listUnmappedVehicles(deps.pool, record.id);
    const data = {
      ...present(record, decryptJson<ProviderConfig>(deps.secretsKey, record.configCiphertext), request),
      unmapped_vehicles: unmapped.map((u) => ({
        provider_vehicle_id: u.providerVehicleId,
        first_seen_at: u.firstSeenAt.toISOString(),
        last_seen_at: u.lastSeenAt.toISOString(),
        samples_count: u.samplesCount,
      })),
    };
    return { success: true, data, meta: meta(null) };
  });

  app.delete('/provider-connections/:connection_id', {
    schema: {
      tags: ['Operator'],
      summary: 'Deactivate a provider connection: pushes answer 404, pulls stop; stored data stays',
      security: adminSecurity,
      params: ConnectionParams,
      response: { 200: Envelope(Connection), ...adminErrors },
    },
  }, async (request) => {
    const existing = await requireConnection((request.params as { connection_id: string }).connection_id);
    const record = (await setConnectionActive(deps.pool, existing.id, false))!;
    deps.connections.forget(record.id);
    await deps.queues.unschedule('pull', schedulerId(record.id));
    return { success: true, data: present(record, decryptJson<ProviderConfig>(deps.secretsKey, record.configCiphertext), request), meta: meta(null) };
  });
}
