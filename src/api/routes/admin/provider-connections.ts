/** Operator API: provider connections (credentials encrypted at rest, never returned). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isProviderId } from '../../../../providers/index.js';
import { providerIds, type ProviderConfig } from '../../../../providers/types.js';
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
import { Envelope, Nullable, PathId, StringEnum, Timestamp, ok } from '../../../web/schemas.js';
import { isRecordId } from '../../../domain/ids.js';
import { presentProviderConnection, presentUnmappedVehicle } from '../../../presenters/provider-connection.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany } from './shared.js';
import { enqueueAfterCommit } from '../../../queue/after-commit.js';
import { pullSchedulerId, schedulePullFeed } from '../../../ingest/pulls.js';

export interface ConnectionAdminDeps {
  pool: Pool;
  queues: Queues;
  connections: ConnectionCache;
  secretsKey: Buffer;
  /** WEBHOOK_ALLOW_NETS: a provider base_url may be plain http only inside them. */
  allowNets: readonly string[];
}

const ConnectionBody = Type.Object(
  {
    provider: StringEnum(providerIds),
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    config: Type.Object(
      {
        webhook_secret: Type.Optional(Type.String({ minLength: 8, maxLength: 500 })),
        base_url: Type.Optional(
          Type.String({
            maxLength: 500,
            description: 'https (http only to WEBHOOK_ALLOW_NETS); not a private address.',
          }),
        ),
        api_token: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
        database: Type.Optional(Type.String({ maxLength: 200 })),
        username: Type.Optional(Type.String({ maxLength: 200 })),
        password: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false, default: {} },
    ),
    pull_interval_seconds: Type.Optional(
      Type.Integer({
        minimum: 5,
        maximum: 86_400,
        description: 'Feed pull period (Samsara, Geotab, Motive); default 60.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Id = Type.String({ maxLength: 100 });
const Connection = Type.Object({
  id: Id,
  company_id: Id,
  provider: Type.String({ maxLength: 40 }),
  name: Nullable(Type.String({ maxLength: 200 })),
  active: Type.Boolean(),
  ingest_url: Nullable(
    Type.String({
      maxLength: 2048,
      description: 'Where the provider pushes (null for Geotab, which is pulled; a Traccar URL is shown once).',
    }),
  ),
  config_keys: Type.Array(Type.String({ maxLength: 40 }), {
    description: 'Which config entries are set; their values are never returned.',
  }),
  pull_interval_seconds: Type.Integer(),
  last_pull_at: Nullable(Timestamp),
  last_pull_error: Nullable(Type.String({ maxLength: 2000 })),
  created_at: Timestamp,
});

const CreatedConnection = Type.Object({
  ...Connection.properties,
  generated_secret: Nullable(
    Type.String({ maxLength: 200, description: 'The signing secret or device token we generated; shown once.' }),
  ),
});

const ConnectionDetail = Type.Object({
  ...Connection.properties,
  unmapped_vehicles: Type.Array(
    Type.Object({
      provider_vehicle_id: Type.String({ maxLength: 1000 }),
      first_seen_at: Timestamp,
      last_seen_at: Timestamp,
      samples_count: Type.Integer(),
    }),
  ),
});

/** A host name or address literal with an optional port: all a Host header may hold. */
const hostPattern = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

/** Where providers reach this service, from the request's Host (or X-Forwarded-Host behind a trusted proxy). */
function origin(request: FastifyRequest): string {
  // Checked so a Host header that is not a host (spaces, paths, port 99999) never ends up inside ingest_url.
  if (hostPattern.test(request.host)) {
    try {
      return new URL(`${request.protocol}://${request.host}`).origin;
    } catch {
      // not a host after all
    }
  }
  throw invalidRequest([{ field: 'host', message: 'the Host header is not a valid host' }]);
}

/** The connection as answered; `created`: the answer to the creation, the one time a Traccar URL (it embeds the device token) is shown. */
function present(record: ProviderConnectionRecord, config: ProviderConfig, base: string, created = false) {
  const url = isProviderId(record.provider) ? ingestUrl(base, record.provider, record.id, config, created) : null;
  return presentProviderConnection(record, config, url);
}

export async function providerConnectionAdminRoutes(
  fastify: FastifyInstance,
  deps: ConnectionAdminDeps,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ConnectionParams = Type.Object({ connection_id: PathId });
  // Every answer carries ingest_url: a bad Host is refused before a handler writes anything.
  app.addHook('preHandler', async (request) => {
    origin(request);
  });

  async function requireConnection(id: string): Promise<ProviderConnectionRecord> {
    const record = isRecordId(id) ? await findProviderConnection(deps.pool, id) : null;
    if (!record) throw notFound('provider connection');
    return record;
  }

  app.post(
    '/companies/:company_id/provider-connections',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateProviderConnection',
        summary: 'Connect a telematics provider; secrets are encrypted and never returned',
        security: adminSecurity,
        params: CompanyParams,
        body: ConnectionBody,
        response: { 201: Envelope(CreatedConnection), ...adminErrors },
      },
    },
    async (request, reply) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const body = request.body;
      const prepared = prepareConnectionConfig(body.provider, body.config, deps.allowNets);
      if (!prepared.ok) throw invalidRequest(prepared.errors);
      const record = await insertProviderConnection(deps.pool, {
        companyId: company.id,
        provider: body.provider,
        name: body.name ?? null,
        configCiphertext: encryptJson(deps.secretsKey, prepared.value.config),
        pullIntervalSeconds: body.pull_interval_seconds ?? 60,
      });
      if (pullsFeed(body.provider, prepared.value.config)) {
        await enqueueAfterCommit(request.log, 'pull.sync-schedules', () => schedulePullFeed(deps.queues, record));
      }
      const data = {
        ...present(record, prepared.value.config, origin(request), true),
        generated_secret: prepared.value.generatedSecret,
      };
      return reply.code(201).send(ok(data));
    },
  );

  app.get(
    '/companies/:company_id/provider-connections',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListProviderConnections',
        summary: "List a company's provider connections",
        security: adminSecurity,
        params: CompanyParams,
        response: { 200: Envelope(Type.Array(Connection)), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const records = await listProviderConnections(deps.pool, company.id);
      const data = records.map((r) =>
        present(r, decryptJson<ProviderConfig>(deps.secretsKey, r.configCiphertext), origin(request)),
      );
      return ok(data);
    },
  );

  app.get(
    '/provider-connections/:connection_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminGetProviderConnection',
        summary: 'A provider connection with its pull status and the vehicles it reports that are not mapped',
        security: adminSecurity,
        params: ConnectionParams,
        response: { 200: Envelope(ConnectionDetail), ...adminErrors },
      },
    },
    async (request) => {
      const record = await requireConnection(request.params.connection_id);
      const unmapped = await listUnmappedVehicles(deps.pool, record.id);
      const data = {
        ...present(record, decryptJson<ProviderConfig>(deps.secretsKey, record.configCiphertext), origin(request)),
        unmapped_vehicles: unmapped.map(presentUnmappedVehicle),
      };
      return ok(data);
    },
  );

  app.delete(
    '/provider-connections/:connection_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminDeactivateProviderConnection',
        summary: 'Deactivate a provider connection: pushes answer 404, pulls stop; stored data stays',
        security: adminSecurity,
        params: ConnectionParams,
        response: { 200: Envelope(Connection), ...adminErrors },
      },
    },
    async (request) => {
      const existing = await requireConnection(request.params.connection_id);
      const record = (await setConnectionActive(deps.pool, existing.id, false))!;
      deps.connections.forget(record.id);
      await enqueueAfterCommit(request.log, 'pull.sync-schedules', () =>
        deps.queues.unschedule('pull', pullSchedulerId(record.id)),
      );
      return ok(
        present(record, decryptJson<ProviderConfig>(deps.secretsKey, record.configCiphertext), origin(request)),
      );
    },
  );
}
