/** Operator API: create, list, patch and deactivate vehicles. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withTransaction, type Pool } from '../../../db/pool.js';
import { deactivateVehicle, findVehicleCompanyId, listCompanyVehicles } from '../../../db/vehicles.js';
import { notFound } from '../../../errors.js';
import { requestAfterEvaluation } from '../../../queue/enqueue-health.js';
import type { Queues } from '../../../queue/queues.js';
import { createVehicle, patchVehicle } from '../../../vehicles/vehicle-admin.js';
import { transferVehicle } from '../../../vehicles/vehicle-transfer.js';
import { presentAdminVehicle } from '../../../presenters/vehicle.js';
import { AdminVehicle, VehicleCreate, VehiclePatch } from '../../schemas/admin.js';
import { Envelope, PageOnlyQuery, PathId, Timestamp, ok } from '../../../web/schemas.js';
import { isRecordId } from '../../../domain/ids.js';
import { vehicleAttributes } from './request-mapping.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany, requireOwner } from './shared.js';

const VehicleParams = Type.Object({ vehicle_id: PathId });

const VehicleTransfer = Type.Object(
  {
    to_company_id: PathId,
    at: Type.Optional({ ...Timestamp, description: 'When the new company got the vehicle; default now.' }),
  },
  { additionalProperties: false },
);

export const vehicleAdminRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; queues: Queues; now: () => Date }> = async (
  app,
  deps,
) => {
  app.post(
    '/companies/:company_id/vehicles',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateVehicle',
        summary: 'Add a vehicle to a company',
        security: adminSecurity,
        params: CompanyParams,
        body: VehicleCreate,
        response: { 201: Envelope(AdminVehicle), ...adminErrors },
      },
    },
    async (request, reply) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const attributes = vehicleAttributes(request.body);
      const vehicle = await withTransaction(deps.pool, (tx) => createVehicle(tx, company.id, attributes));
      return reply.code(201).send(ok(presentAdminVehicle(vehicle)));
    },
  );

  app.get(
    '/companies/:company_id/vehicles',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListVehicles',
        summary: "List a company's vehicles, deactivated ones included",
        security: adminSecurity,
        params: CompanyParams,
        querystring: PageOnlyQuery,
        response: { 200: Envelope(Type.Array(AdminVehicle)), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const { limit, offset } = request.query;
      const vehicles = await listCompanyVehicles(deps.pool, company.id, limit, offset);
      return ok(vehicles.map(presentAdminVehicle), { limit, offset, total: null });
    },
  );

  app.patch(
    '/vehicles/:vehicle_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminUpdateVehicle',
        summary: 'Change vehicle attributes (absent fields stay, null clears)',
        security: adminSecurity,
        params: VehicleParams,
        body: VehiclePatch,
        response: { 200: Envelope(AdminVehicle), ...adminErrors },
      },
    },
    async (request) => {
      const vehicleId = request.params.vehicle_id;
      const companyId = await requireOwner(deps.pool, vehicleId, 'vehicle', findVehicleCompanyId);
      const attributes = vehicleAttributes(request.body);
      const vehicle = await withTransaction(deps.pool, (tx) => patchVehicle(tx, companyId, vehicleId, attributes));
      return ok(presentAdminVehicle(vehicle));
    },
  );

  app.delete(
    '/vehicles/:vehicle_id',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminDeactivateVehicle',
        summary: 'Deactivate a vehicle (it leaves GET /vehicles; its history stays)',
        security: adminSecurity,
        params: VehicleParams,
        response: { 200: Envelope(AdminVehicle), ...adminErrors },
      },
    },
    async (request) => {
      const vehicleId = request.params.vehicle_id;
      const companyId = await requireOwner(deps.pool, vehicleId, 'vehicle', findVehicleCompanyId);
      const vehicle = await deactivateVehicle(deps.pool, companyId, vehicleId);
      if (!vehicle) throw notFound('vehicle');
      return ok(presentAdminVehicle(vehicle));
    },
  );

  app.post(
    '/vehicles/:vehicle_id/transfer',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminTransferVehicle',
        summary: 'Move a vehicle to another company (its history stays with the VIN)',
        description:
          'Ends the current ownership and starts the new one at `at`; the provider connection, home location and ' +
          "the old company's monitoring subscriptions of the vehicle are let go. The new company sees the vehicle's " +
          'readings from `at` on only (the odometer travels with the car; docs/ownership.md). 409 while the vehicle ' +
          'has an open run.',
        security: adminSecurity,
        params: VehicleParams,
        body: VehicleTransfer,
        response: { 200: Envelope(AdminVehicle), ...adminErrors },
      },
    },
    async (request) => {
      const vehicleId = request.params.vehicle_id;
      const companyId = await requireOwner(deps.pool, vehicleId, 'vehicle', findVehicleCompanyId);
      const { to_company_id: toCompanyId, at } = request.body;
      if (!isRecordId(toCompanyId)) throw notFound('company');
      const { vehicle, evaluation } = await withTransaction(deps.pool, (tx) =>
        transferVehicle(tx, companyId, vehicleId, toCompanyId, at === undefined ? null : new Date(at), deps.now()),
      );
      if (evaluation) await requestAfterEvaluation(deps.queues, request.log, evaluation);
      return ok(presentAdminVehicle(vehicle));
    },
  );
};
