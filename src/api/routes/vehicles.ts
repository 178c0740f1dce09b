/** GET /vehicles, GET /vehicles/{vehicle_id}, PUT /vehicles/{vehicle_id} (spec/000). */
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import { withTransaction, type Pool } from '../../db/pool.js';
import { countActiveVehicles, findActiveVehicle, listActiveVehicles } from '../../db/vehicles.js';
import { invalidRequest, notFound } from '../../errors.js';
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

export async function vehicleRoutes(app: FastifyInstance, deps: { pool: Pool; now: () => Date }): Promise<void> {
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
    return { success: true, data: presentVehicle(vehicle), meta: meta(null) };
  });
}
