/** GET /vehicles, GET /vehicles/{vehicle_id}, PUT /vehicles/{vehicle_id} (spec/000). */
import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import { adapters, isProviderId } from '../../../providers/index.js';
import type { Queues } from '../../queue/queues.js';
import { enqueueHealthEvaluations } from '../../health/enqueue.js';
import { withTransaction, type Pool } from '../../db/pool.js';
import { countActiveVehicles, findActiveVehicle, listActiveVehicles } from '../../db/vehicles.js';
import { AppError, invalidRequest, notFound } from '../../errors.js';
import { updateVehicleByIntegrator, type VehicleUpdate } from '../../vehicles/vehicle-update.js';
import { presentVehicle } from '../presenters/vehicle.js';
import { Envelope, ErrorEnvelope, PageQuery, PathId, authErrorResponses, isRecordId, meta } from '../schemas/common.js';
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
  { cascade: Type.Boolean({ default: true, description: 'Run downstream processing (alerts, runs) after the refresh.' }) },
  { additionalProperties: false },
);
const RefreshResult = Type.Object({
  refresh_id: Type.String(),
  provider: Type.String(),
  status: Type.String({ description: 'queued' }),
  cascade: Type.Boolean(),
});

export async function vehicleRoutes(app: FastifyInstance, deps: { pool: Pool; queues: Queues; now: () => Date }): Promise<void> {
  app.get('/vehicles', {
    schema: {
      tags: ['Vehicles'],
      summary: 'List active vehicles with their latest state, newest change first',
      security,
      querystring: VehicleListQuery,
      response: { 200: Envelope(Type.Array(Vehicle)), 400: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request) => {
    const query = request.query as Type.Static<typeof VehicleListQuery>;
    const updatedSince = query.updated_since ? new Date(query.updated_since) : null;
    const { companyId } = request.principal;
    const [vehicles, total] = await Promise.all([
      listActiveVehicles(deps.pool, companyId, { updatedSince, limit: query.limit, offset: query.offset }),
      query.include_total ? countActiveVehicles(deps.pool, companyId, updatedSince) : null,
    ]);
    return {
      success: true,
      data: vehicles.map(presentVehicle),
      meta: meta({ limit: query.limit, offset: query.offset, total }),
    };
  });

  app.get('/vehicles/:vehicle_id', {
    schema: {
      tags: ['Vehicles'],
      summary: 'Get one vehicle with its latest state and health',
      security,
      params: VehicleParams,
      response: { 200: Envelope(Vehicle), 404: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request) => {
    const { vehicle_id: vehicleId } = request.params as { vehicle_id: string };
    const vehicle = isRecordId(vehicleId) ? await findActiveVehicle(deps.pool, request.principal.companyId, vehicleId) : null;
    if (!vehicle) throw notFound('vehicle');
    return { success: true, data: presentVehicle(vehicle), meta: meta(null) };
  });

  app.put('/vehicles/:vehicle_id', {
    schema: {
      tags: ['Vehicles'],
      summary: 'Update license_plate, name or odometer_miles',
      description:
        'Only license_plate, name and odometer_miles are accepted. An odometer write is a reading taken now ' +
        '(source manual); 409 ODOMETER_CONFLICT when it would run the odometer backwards or the provider ' +
        'supplies a current ECU odometer. odometer_miles: null is ignored.',
      security,
      params: VehicleParams,
      body: VehicleUpdateRequest,
      response: { 200: Envelope(Vehicle), 400: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request) => {
    const { vehicle_id: vehicleId } = request.params as { vehicle_id: string };
    const body = request.body as VehicleUpdateRequest;
    const update: VehicleUpdate = {};
    if (body.name !== undefined) update.name = body.name;
    if (body.license_plate !== undefined) update.licensePlate = body.license_plate;
    if (body.odometer_miles !== undefined && body.odometer_miles !== null) update.odometerMiles = body.odometer_miles;
    if (Object.keys(update).length === 0) {
      throw invalidRequest([{ field: 'body', message: 'no valid field: give license_plate, name or odometer_miles' }]);
    }
    if (!isRecordId(vehicleId)) throw notFound('vehicle');
    const vehicle = await withTransaction(deps.pool, (tx) =>
      updateVehicleByIntegrator(tx, request.principal.companyId, vehicleId, update, deps.now()),
    );
    if (update.odometerMiles !== undefined) {
      // A new odometer can change maintenance due and the tracker link; the sweep catches up if Redis is away.
      await enqueueHealthEvaluations(deps.queues, [vehicleId], true).catch((err: unknown) =>
        request.log.warn({ err: (err as Error).message }, 'could not enqueue a health evaluation'),
      );
    }
    return { success: true, data: presentVehicle(vehicle), meta: meta(null) };
  });

  app.post('/vehicles/:vehicle_id/refresh', {
    schema: {
      tags: ['Vehicles'],
      summary: "Pull this vehicle's latest data from its provider now",
      description:
        'Queues a pull of the vehicle from its telematics provider; concurrent refreshes of one vehicle coalesce into ' +
        'one (the same refresh_id). 400 REFRESH_NOT_SUPPORTED for Traccar and manually tracked vehicles; 501 ' +
        'REFRESH_NOT_IMPLEMENTED for providers without a pull.',
      security,
      params: VehicleParams,
      body: RefreshRequest,
      response: { 200: Envelope(RefreshResult), 400: ErrorEnvelope, 404: ErrorEnvelope, 501: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request) => {
    const { vehicle_id: vehicleId } = request.params as { vehicle_id: string };
    const { cascade } = (request.body ?? { cascade: true }) as Type.Static<typeof RefreshRequest>;
    const vehicle = isRecordId(vehicleId) ? await findActiveVehicle(deps.pool, request.principal.companyId, vehicleId) : null;
    if (!vehicle) throw notFound('vehicle');
    const provider = vehicle.telematicsProvider;
    if (!provider || !isProviderId(provider) || adapters[provider].refresh === 'unsupported') {
      throw new AppError('REFRESH_NOT_SUPPORTED', provider ? `${provider} vehicles cannot be asked for data; they push it` : 'the vehicle is tracked manually');
    }
    if (adapters[provider].refresh === 'not_implemented') {
      throw new AppError('REFRESH_NOT_IMPLEMENTED', `refresh is not implemented for ${provider}`);
    }
    if (!vehicle.providerConnectionId || !vehicle.providerVehicleId) {
      throw new AppError('REFRESH_NOT_SUPPORTED', 'the vehicle has no provider connection and provider vehicle id to pull with');
    }
    const refreshId = randomUUID();
    const job = await deps.queues.add('pull.refresh', { vehicleId, refreshId, cascade }, { deduplicationId: `refresh-${vehicleId}` });
    // A refresh already queued for this vehicle absorbs this one: answer with its id.
    const queued = job.id ? await deps.queues.queue('pull').getJob(job.id) : undefined;
    const effective = (queued?.data as { refreshId: string; cascade: boolean } | undefined) ?? { refreshId, cascade };
    return {
      success: true,
      data: { refresh_id: effective.refreshId, provider, status: 'queued', cascade: effective.cascade },
      meta: meta(null),
    };
  });
}

