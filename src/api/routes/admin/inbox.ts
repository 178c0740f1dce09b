/**
 * Operator API: the ingest inbox. Parked rows (payloads that failed on their own and wait for a
 * fix; docs/operations.md "Runbook: parked inbox rows") and one row's state with the start of its payload.
 * Replaying them is `fleetctl inbox replay --parked`.
 */
import Type from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { providerIds } from '../../../../providers/types.js';
import { countParkedInboxRows, findInboxRow, listParkedInboxRows } from '../../../db/inbox.js';
import type { Pool } from '../../../db/pool.js';
import { notFound } from '../../../errors.js';
import { Envelope, Nullable, NullableString, PathId, StringEnum, Timestamp, meta } from '../../../web/schemas.js';
import { adminErrors, adminSecurity } from './shared.js';
import { presentInboxRow, presentParkedInboxRow } from '../../../presenters/inbox.js';

/** How much of a payload the detail shows, in characters: enough to see its shape. */
const payloadPreviewChars = 4096;
/** Inbox ids are positive bigints; anything else names no row. */
const inboxIdPattern = /^[1-9]\d{0,14}$/;

const FailedQuery = Type.Object(
  {
    provider: Type.Optional(StringEnum(providerIds)),
    connection_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
    company_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1 to 200.' }),
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Rows to skip.' }),
  },
  { additionalProperties: false },
);

const ParkedRowView = Type.Object({
  inbox_id: Type.Integer(),
  company_id: Type.String(),
  connection_id: Type.String(),
  provider: Type.String(),
  received_at: Timestamp,
  parked_at: Timestamp,
  failed_attempts: Type.Integer({ description: 'Times processing this row alone failed.' }),
  error: NullableString,
  payload_bytes: Type.Integer(),
});

const InboxRowView = Type.Object({
  inbox_id: Type.Integer(),
  company_id: Type.String(),
  connection_id: Type.String(),
  provider: Type.String(),
  state: StringEnum(['pending', 'processed', 'parked'] as const),
  content_type: NullableString,
  received_at: Timestamp,
  processed_at: Nullable(Timestamp),
  parked_at: Nullable(Timestamp),
  failed_attempts: Type.Integer(),
  error: NullableString,
  samples_count: Nullable(Type.Integer()),
  skipped_count: Nullable(Type.Integer()),
  unmapped_count: Nullable(Type.Integer()),
  payload_bytes: Type.Integer(),
  payload_preview: Type.String({ description: `The first ${payloadPreviewChars} characters of the raw payload.` }),
});

export async function inboxAdminRoutes(fastify: FastifyInstance, deps: { pool: Pool }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/inbox/failed',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListFailedInboxRows',
        summary: 'Parked inbox rows: payloads that failed on their own, oldest first',
        security: adminSecurity,
        querystring: FailedQuery,
        response: { 200: Envelope(Type.Array(ParkedRowView)), ...adminErrors },
      },
    },
    async (request) => {
      const { limit, offset, ...query } = request.query;
      const filter = {
        provider: query.provider ?? null,
        connectionId: query.connection_id ?? null,
        companyId: query.company_id ?? null,
      };
      const [rows, total] = await Promise.all([
        listParkedInboxRows(deps.pool, filter, { limit, offset }),
        countParkedInboxRows(deps.pool, filter),
      ]);
      return { success: true, data: rows.map(presentParkedInboxRow), meta: meta({ limit, offset, total }) };
    },
  );

  app.get(
    '/inbox/:inbox_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminGetInboxRow',
        summary: 'One inbox row: its state, counts, error and the start of its payload',
        security: adminSecurity,
        params: Type.Object({ inbox_id: PathId }),
        response: { 200: Envelope(InboxRowView), ...adminErrors },
      },
    },
    async (request) => {
      const id = request.params.inbox_id;
      const row = inboxIdPattern.test(id) ? await findInboxRow(deps.pool, Number(id), payloadPreviewChars) : null;
      if (!row) throw notFound('inbox row');
      return { success: true, data: presentInboxRow(row), meta: meta(null) };
    },
  );
}
