/** Vehicles: the company's active vehicles with health, link state and last reading; one vehicle's signals and alerts. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { presentVehicle } from '../../presenters/vehicle.js';
import type { Pool } from '../../db/pool.js';
import { listActiveVehicles } from '../../db/vehicles.js';
import { requireVehicle } from '../../vehicles/vehicle-actions.js';
import { viewer } from '../viewer.js';
import { vehiclePage, vehiclesPage } from '../views/vehicles.js';
import { IdParams } from './forms.js';

/** One page of the console shows at most this many vehicles (the API pages through the rest). */
const vehiclesShown = 500;

export const vehiclePages: FastifyPluginAsyncTypebox<{ pool: Pool }> = async (app, deps) => {
  app.get('/console/vehicles', { schema: { hide: true } }, async (request, reply) => {
    const vehicles = await listActiveVehicles(deps.pool, request.consoleSession.companyId, {
      updatedSince: null,
      limit: vehiclesShown,
      offset: 0,
    });
    return reply.type('text/html; charset=utf-8').send(vehiclesPage(viewer(request), vehicles));
  });

  app.get('/console/vehicles/:id', { schema: { hide: true, params: IdParams } }, async (request, reply) => {
    const { id } = request.params;
    const vehicle = await requireVehicle(deps.pool, request.consoleSession.companyId, id);
    // The same signals the API answers (odometer in both units), without the per-signal times the
    // page has no room for (observed_at): the vehicle's last reading time is shown above.
    const { observed_at: _times, ...signals } = presentVehicle(vehicle).signals as Record<string, unknown>;
    return reply.type('text/html; charset=utf-8').send(vehiclePage(viewer(request), vehicle, signals));
  });
};
