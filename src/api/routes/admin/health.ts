/** Operator API: health thresholds and maintenance schedules (overrides), and service entries. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withTransaction, type Pool } from '../../../db/pool.js';
import { recheckCompanyVehicles } from '../../../db/health.js';
import { findCompanyHealthConfig, setCompanyHealthConfig } from '../../../db/companies.js';
import { insertServiceEntry, listServiceEntries } from '../../../db/service-entries.js';
import { findVehicleCompanyId, setVehicleHealthConfig } from '../../../db/vehicles.js';
import { milesToKm } from '../../../domain/units.js';
import { effectiveHealthConfig, type DeepPartial, type HealthConfig } from '../../../domain/health-config.js';
import { enqueueHealthEvaluations } from '../../../queue/enqueue-health.js';
import type { Queues } from '../../../queue/queues.js';
import { HealthConfigOverrides, HealthConfigView, MaintenanceType } from '../../schemas/health.js';
import { Envelope, Nullable, NullableString, OptionalText, PathId, Timestamp, ok } from '../../../web/schemas.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany, requireOwner } from './shared.js';
import { enqueueAfterCommit } from '../../../queue/after-commit.js';
import { presentServiceEntry } from '../../../presenters/service-entry.js';

type Overrides = DeepPartial<HealthConfig>;

const VehicleParams = Type.Object({ vehicle_id: PathId });

const ServiceEntryBody = Type.Object(
  {
    type: MaintenanceType,
    performed_at: Timestamp,
    odometer_miles: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 10_000_000 }))),
    notes: OptionalText('text'),
  },
  { additionalProperties: false },
);

const ServiceEntry = Type.Object({
  id: Type.String(),
  vehicle_id: Type.String(),
  type: Type.String(),
  performed_at: Timestamp,
  odometer_miles: Nullable(Type.Number()),
  notes: NullableString,
  created_at: Timestamp,
});

export const healthAdminRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; queues: Queues }> = async (app, deps) => {
  const reevaluate = (vehicleId: string) =>
    enqueueAfterCommit(app.log, 'health.sweep', () => enqueueHealthEvaluations(deps.queues, [vehicleId], true));

  app.get(
    '/companies/:company_id/health-config',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminGetCompanyHealthConfig',
        summary: "A company's health overrides and the resulting configuration",
        security: adminSecurity,
        params: CompanyParams,
        response: { 200: Envelope(HealthConfigView), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const overrides = ((await findCompanyHealthConfig(deps.pool, company.id)) ?? {}) as Overrides;
      return ok({ overrides, effective: effectiveHealthConfig(overrides) });
    },
  );

  app.put(
    '/companies/:company_id/health-config',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminReplaceCompanyHealthConfig',
        summary:
          "Replace a company's health overrides (thresholds, maintenance schedules); applies from each vehicle's next evaluation",
        security: adminSecurity,
        params: CompanyParams,
        body: HealthConfigOverrides,
        response: { 200: Envelope(HealthConfigView), ...adminErrors },
      },
    },
    async (request) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      // Its vehicles are evaluated under the new overrides at the next sweep, in the same transaction.
      const overrides = (await withTransaction(deps.pool, async (tx) => {
        const saved = await setCompanyHealthConfig(tx, company.id, request.body);
        await recheckCompanyVehicles(tx, company.id);
        return saved;
      })) as Overrides;
      return ok({ overrides, effective: effectiveHealthConfig(overrides) });
    },
  );

  app.put(
    '/vehicles/:vehicle_id/health-config',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminReplaceVehicleHealthConfig',
        summary: "Replace a vehicle's health overrides (over the company's); re-evaluates the vehicle",
        security: adminSecurity,
        params: VehicleParams,
        body: HealthConfigOverrides,
        response: { 200: Envelope(HealthConfigView), ...adminErrors },
      },
    },
    async (request) => {
      const vehicleId = request.params.vehicle_id;
      const companyId = await requireOwner(deps.pool, vehicleId, 'vehicle', findVehicleCompanyId);
      const overrides = (await setVehicleHealthConfig(deps.pool, vehicleId, request.body)) as Overrides;
      const companyOverrides = ((await findCompanyHealthConfig(deps.pool, companyId)) ?? {}) as Overrides;
      await reevaluate(vehicleId);
      return ok({ overrides, effective: effectiveHealthConfig(companyOverrides, overrides) });
    },
  );

  app.post(
    '/vehicles/:vehicle_id/service-entries',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateServiceEntry',
        summary: 'Record a service done outside runs; maintenance intervals restart from it',
        security: adminSecurity,
        params: VehicleParams,
        body: ServiceEntryBody,
        response: { 201: Envelope(ServiceEntry), ...adminErrors },
      },
    },
    async (request, reply) => {
      const vehicleId = request.params.vehicle_id;
      const companyId = await requireOwner(deps.pool, vehicleId, 'vehicle', findVehicleCompanyId);
      const { body } = request;
      const entry = await insertServiceEntry(deps.pool, {
        companyId,
        vehicleId,
        type: body.type,
        performedAt: new Date(body.performed_at),
        odometerKm:
          body.odometer_miles === undefined || body.odometer_miles === null ? null : milesToKm(body.odometer_miles),
        notes: body.notes ?? null,
      });
      await reevaluate(vehicleId);
      return reply.code(201).send(ok(presentServiceEntry(entry)));
    },
  );

  app.get(
    '/vehicles/:vehicle_id/service-entries',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminListServiceEntries',
        summary: "A vehicle's recorded service entries, newest first",
        security: adminSecurity,
        params: VehicleParams,
        response: { 200: Envelope(Type.Array(ServiceEntry)), ...adminErrors },
      },
    },
    async (request) => {
      const vehicleId = request.params.vehicle_id;
      await requireOwner(deps.pool, vehicleId, 'vehicle', findVehicleCompanyId);
      return ok((await listServiceEntries(deps.pool, vehicleId)).map(presentServiceEntry));
    },
  );
};
