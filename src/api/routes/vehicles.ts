/** GET /vehicles, GET /vehicles/{vehicle_id}, PUT /vehicles/{vehicle_id} (docs/api.md). */
import Type, { type TSchema } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Queues } from '../../queue/queues.js';
import type { Pool } from '../../db/pool.js';
import type { VehicleRecord } from '../../domain/vehicle.js';
import {
  countActiveVehicles,
  findActiveVehicleVersion,
  findActiveVehiclesWithVersions,
  listActiveVehicleVersions,
} from '../../db/vehicles.js';
import { invalidRequest, notFound } from '../../errors.js';
import { refreshVehicle, updateVehicle } from '../../vehicles/vehicle-actions.js';
import type { VehicleUpdate } from '../../vehicles/vehicle-update.js';
import { presentVehicle } from '../../presenters/vehicle.js';
import {
  Envelope,
  ErrorEnvelope,
  Meta,
  PageQuery,
  PathId,
  authErrorResponses,
  meta,
  ok,
  type Page,
} from '../../web/schemas.js';
import { isRecordId } from '../../domain/ids.js';
import { presentedVehicleById, presentedVehicles, VehicleJsonCache } from '../vehicle-json-cache.js';
import { Vehicle, VehicleUpdateRequest } from '../schemas/vehicle.js';

const security = [{ bearerAuth: [] }];

const VehicleListQuery = Type.Object(
  {
    updated_since: Type.Optional(PageQuery.updated_since),
    limit: PageQuery.limit,
    offset: PageQuery.offset,
    include_total: Type.Boolean({ default: false, description: 'Include meta.total (extra query cost).' }),
  },
  { additionalProperties: false },
);

const VehicleParams = Type.Object({ vehicle_id: PathId });

const RefreshRequest = Type.Object(
  {
    cascade: Type.Boolean({
      default: true,
      description:
        'Run downstream processing (alerts, runs, monitoring events) after the refresh. false: only the vehicle ' +
        'state (latest signals, odometer, link state) moves, and its samples never reach the alerts or detectors.',
    }),
  },
  { additionalProperties: false },
);
const RefreshResult = Type.Object({
  refresh_id: Type.String(),
  provider: Type.String(),
  status: Type.String({ description: 'queued' }),
  cascade: Type.Boolean(),
});

// Fastify's serializeInput types a schema as a plain record; a TypeBox schema is one at run time.
const jsonSchema = (schema: TSchema) => schema as unknown as Record<string, unknown>;
const VehicleSchema = jsonSchema(Vehicle);
const MetaSchema = jsonSchema(Meta);

const comma = Buffer.from(',');
const listStart = Buffer.from('{"success":true,"data":[');
const oneStart = Buffer.from('{"success":true,"data":');

/**
 * Sends the success envelope around presented vehicles (UTF-8 JSON made by the response schema's
 * serializer), one or a list, with meta serialized by its schema: the bytes the route's schema
 * would send, assembled by copying.
 */
function sendEnvelope(reply: FastifyReply, data: Buffer | readonly Buffer[], page: Page | null = null) {
  const metaJson = reply.serializeInput(meta(page), MetaSchema);
  const parts = Buffer.isBuffer(data)
    ? [oneStart, data, Buffer.from(`,"meta":${metaJson}}`)]
    : [
        listStart,
        ...data.flatMap((item, i) => (i === 0 ? [item] : [comma, item])),
        Buffer.from(`],"meta":${metaJson}}`),
      ];
  // Already JSON: Buffers go out as they are, not serialized again.
  return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts) as never);
}

export const vehicleRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  queues: Queues;
  now: () => Date;
  vehicleCache: VehicleJsonCache;
}> = async (app, deps) => {
  const load = (pool: Pool, companyId: string) => (ids: string[]) =>
    findActiveVehiclesWithVersions(pool, companyId, ids);
  // The response schema's own serializer, so a cached vehicle is byte for byte what it would send.
  const serializer = (reply: FastifyReply) => (vehicle: VehicleRecord) =>
    reply.serializeInput(presentVehicle(vehicle), VehicleSchema);
  // This process's recent by-id cache hits: they choose how the next by-id read goes.
  const byIdReads = { hitRate: 1 };
  app.get(
    '/vehicles',
    {
      schema: {
        tags: ['Vehicles'],
        operationId: 'listVehicles',
        summary: 'List active vehicles with their latest state, newest change first',
        security,
        querystring: VehicleListQuery,
        response: { 200: Envelope(Type.Array(Vehicle)), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const updatedSince = query.updated_since ? new Date(query.updated_since) : null;
      const { companyId } = request.principal;
      const pool = request.readPool;
      const [versions, total] = await Promise.all([
        listActiveVehicleVersions(pool, companyId, { updatedSince, limit: query.limit, offset: query.offset }),
        query.include_total ? countActiveVehicles(pool, companyId, updatedSince) : null,
      ]);
      const items = await presentedVehicles(deps.vehicleCache, versions, load(pool, companyId), serializer(reply));
      return sendEnvelope(reply, items, { limit: query.limit, offset: query.offset, total });
    },
  );

  app.get(
    '/vehicles/:vehicle_id',
    {
      schema: {
        tags: ['Vehicles'],
        operationId: 'getVehicle',
        summary: 'Get one vehicle with its latest state and health',
        security,
        params: VehicleParams,
        response: { 200: Envelope(Vehicle), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request, reply) => {
      const { companyId } = request.principal;
      const id = request.params.vehicle_id;
      const pool = request.readPool;
      const item = isRecordId(id)
        ? await presentedVehicleById(
            deps.vehicleCache,
            id,
            byIdReads,
            () => findActiveVehicleVersion(pool, companyId, id),
            load(pool, companyId),
            serializer(reply),
          )
        : undefined;
      if (item === undefined) throw notFound('vehicle');
      return sendEnvelope(reply, item);
    },
  );

  app.put(
    '/vehicles/:vehicle_id',
    {
      schema: {
        tags: ['Vehicles'],
        operationId: 'updateVehicle',
        summary: 'Update license_plate, name or odometer_miles',
        description:
          'Only license_plate, name and odometer_miles are accepted. An odometer write is a reading taken now ' +
          '(source manual); 409 ODOMETER_CONFLICT when it would run the odometer backwards or the provider ' +
          'supplies a current ECU odometer. odometer_miles: null is ignored.',
        security,
        params: VehicleParams,
        body: VehicleUpdateRequest,
        response: {
          200: Envelope(Vehicle),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          409: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { vehicle_id: vehicleId } = request.params;
      const { body } = request;
      const update: VehicleUpdate = {};
      if (body.name !== undefined) update.name = body.name;
      if (body.license_plate !== undefined) update.licensePlate = body.license_plate;
      if (body.odometer_miles !== undefined && body.odometer_miles !== null) update.odometerMiles = body.odometer_miles;
      if (Object.keys(update).length === 0) {
        throw invalidRequest([
          { field: 'body', message: 'no valid field: give license_plate, name or odometer_miles' },
        ]);
      }
      const vehicle = await updateVehicle(deps, request.log, request.principal.companyId, vehicleId, update);
      return ok(presentVehicle(vehicle));
    },
  );

  app.post(
    '/vehicles/:vehicle_id/refresh',
    {
      schema: {
        tags: ['Vehicles'],
        operationId: 'refreshVehicle',
        summary: "Pull this vehicle's latest data from its provider now",
        description:
          'Queues a pull of the vehicle from its telematics provider; concurrent refreshes of one vehicle with the same ' +
          'cascade coalesce into one (the same refresh_id). 400 REFRESH_NOT_SUPPORTED for Traccar and manually tracked vehicles; 501 ' +
          'REFRESH_NOT_IMPLEMENTED for providers without a pull.',
        security,
        params: VehicleParams,
        body: RefreshRequest,
        response: {
          200: Envelope(RefreshResult),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          501: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { vehicle_id: vehicleId } = request.params;
      const { cascade } = request.body;
      const queued = await refreshVehicle(deps, request.principal.companyId, vehicleId, cascade);
      return ok({ refresh_id: queued.refreshId, provider: queued.provider, status: 'queued', cascade: queued.cascade });
    },
  );
};
