/**
 * Geofences of the caller's company (docs/monitoring.md), under /v1: polygons and circles that
 * geo_fence_entry and geo_fence_exit watch. Deleting one a subscription names in
 * options.geofence_ids is allowed: that subscription simply stops watching it. The caps and the
 * checks are src/monitoring/geofence-actions.ts.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import { countGeofences, listGeofences } from '../../db/geofences.js';
import type { Pool } from '../../db/pool.js';
import { createGeofence, removeGeofence, requireGeofence } from '../../monitoring/geofence-actions.js';
import { Envelope, ErrorEnvelope, PageOnlyQuery, PathId, authErrorResponses, ok } from '../../web/schemas.js';
import { Geofence, GeofenceBody } from '../schemas/monitoring.js';
import { presentGeofence } from '../../presenters/geofence.js';

const security = [{ bearerAuth: [] }];
const tags = ['Geofences'];

const GeofenceParams = Type.Object({ geofence_id: PathId });

export const geofenceRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; config: Config }> = async (app, deps) => {
  app.post(
    '/geofences',
    {
      schema: {
        tags,
        operationId: 'createGeofence',
        summary: 'Create a geofence (a GeoJSON Polygon or a Circle)',
        description:
          '409 LIMIT_REACHED when the company already has GEOFENCES_PER_COMPANY geofences (details.resource ' +
          '"geofences"), or when this fence would take its live fences over GEOFENCE_VERTICES_PER_COMPANY vertices ' +
          '(details.resource "geofence_vertices").',
        security,
        body: GeofenceBody,
        response: { 201: Envelope(Geofence), 400: ErrorEnvelope, 409: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request, reply) => {
      const { name, area } = request.body;
      const geofence = await createGeofence(deps, request.principal.companyId, name, area);
      return reply.code(201).send(ok(presentGeofence(geofence)));
    },
  );

  app.get(
    '/geofences',
    {
      schema: {
        tags,
        operationId: 'listGeofences',
        summary: 'List geofences, newest first',
        security,
        querystring: PageOnlyQuery,
        response: { 200: Envelope(Type.Array(Geofence)), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const { companyId } = request.principal;
      const [geofences, total] = await Promise.all([
        listGeofences(request.readPool, companyId, limit, offset),
        countGeofences(request.readPool, companyId),
      ]);
      return ok(geofences.map(presentGeofence), { limit, offset, total });
    },
  );

  app.get(
    '/geofences/:geofence_id',
    {
      schema: {
        tags,
        operationId: 'getGeofence',
        summary: 'Get a geofence',
        security,
        params: GeofenceParams,
        response: { 200: Envelope(Geofence), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const geofence = await requireGeofence(request.readPool, request.principal.companyId, request.params.geofence_id);
      return ok(presentGeofence(geofence));
    },
  );

  app.delete(
    '/geofences/:geofence_id',
    {
      schema: {
        tags,
        operationId: 'deleteGeofence',
        summary: 'Delete a geofence; subscriptions that name it stop watching it',
        security,
        params: GeofenceParams,
        response: { 200: Envelope(Geofence), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const deleted = await removeGeofence(deps.pool, request.principal.companyId, request.params.geofence_id);
      return ok(presentGeofence(deleted));
    },
  );
};
