/** Vehicles: the company's active vehicles with health, link state and last reading; one vehicle's signals and alerts. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { presentVehicle } from '../../presenters/vehicle.js';
import type { Pool } from '../../db/pool.js';
import Type from 'typebox';
import { listActiveVehiclesPage } from '../../db/vehicles.js';
import { isRecordId } from '../../domain/ids.js';
import { decodeCursor, encodeCursor, readPage } from '../../domain/keyset-page.js';
import { PageFields, pageRequestOf } from './paging.js';
import { requireVehicle } from '../../vehicles/vehicle-actions.js';
import { viewer } from '../viewer.js';
import { vehiclePage, vehiclesPage, type MapSettings } from '../views/vehicles.js';
import { IdParams } from './forms.js';

/** Vehicles per page. */
const vehiclesShown = 50;

const VehiclesQuery = Type.Object(PageFields);

/** The list has the map: its CSP allows images from the tile host. */
const vehiclesRoute = { schema: { hide: true, querystring: VehiclesQuery }, config: { consoleMap: true } };

export const vehiclePages: FastifyPluginAsyncTypebox<{ pool: Pool; map: MapSettings }> = async (app, deps) => {
  app.get('/console/vehicles', vehiclesRoute, async (request, reply) => {
    const { companyId } = request.consoleSession;
    const vehicles = await readPage(
      pageRequestOf(request.query, vehiclesShown),
      (direction, cursor, limit) => {
        const parts = cursor === null ? null : decodeCursor(cursor, 2);
        const at = parts && !Number.isNaN(Date.parse(parts[0]!)) && isRecordId(parts[1]!) ? parts : null;
        const position = at ? { at: at[0]!, id: at[1]! } : null;
        return listActiveVehiclesPage(deps.pool, companyId, position ? direction : 'next', position, limit);
      },
      (v) => encodeCursor([v.cursorAt, v.id]),
    );
    return reply.type('text/html; charset=utf-8').send(vehiclesPage(viewer(request), vehicles, deps.map));
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
