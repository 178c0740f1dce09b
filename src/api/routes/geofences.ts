/**
 * Geofences of the caller's company (docs/monitoring.md), under /v1: polygons and circles that
 * geo_fence_entry and geo_fence_exit watch. Deleting one a subscription names in
 * options.geofence_ids is allowed: that subscription simply stops watching it. Caps that add up:
 * vertices per fence (geofences.ts), fences per company and vertices per company, both checked
 * under one lock with the insert.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import {
  countGeofences,
  deleteGeofence,
  findGeofence,
  insertGeofenceWithinVertices,
  listGeofences,
} from '../../db/geofences.js';
import type { Pool } from '../../db/pool.js';
import { AppError, invalidRequest, notFound } from '../../errors.js';
import { parseGeofenceArea } from '../../monitoring/geofences.js';
import { createWithinCap, type CompanyCap } from '../../db/company-caps.js';
import { Envelope, ErrorEnvelope, PageOnlyQuery, PathId, authErrorResponses, ok } from '../../web/schemas.js';
import { isRecordId } from '../../domain/ids.js';
import { Geofence, GeofenceBody } from '../schemas/monitoring.js';
import { presentGeofence } from '../../presenters/geofence.js';

const security = [{ bearerAuth: [] }];
const tags = ['Geofences'];

const GeofenceParams = Type.Object({ geofence_id: PathId });

export const geofenceRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; config: Config }> = async (app, deps) => {
  const cap: CompanyCap = { resource: 'geofences', limit: deps.config.geofencesPerCompany, count: countGeofences };

  app.post(
    '/geofences',
    {
      schema: {
        tags,
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
      const parsed = parseGeofenceArea(request.body.area);
      if (!parsed.ok) throw invalidRequest(parsed.errors);
      const { companyId } = request.principal;
      const maxVertices = deps.config.geofenceVerticesPerCompany;
      const geofence = await createWithinCap(deps.pool, cap, companyId, async (tx) => {
        const result = await insertGeofenceWithinVertices(tx, {
          companyId,
          name: request.body.name,
          area: parsed.area,
          maxVertices,
        });
        if (result.inserted) return result.inserted;
        throw new AppError(
          'LIMIT_REACHED',
          `the company's geofences have ${result.usedVertices} vertices and this one ${result.vertices}, over the ` +
            `${maxVertices} one company may have (GEOFENCE_VERTICES_PER_COMPANY); delete or simplify fences first`,
          {
            resource: 'geofence_vertices',
            limit: maxVertices,
            used: result.usedVertices,
            requested: result.vertices,
          },
        );
      });
      return reply.code(201).send(ok(presentGeofence(geofence)));
    },
  );

  app.get(
    '/geofences',
    {
      schema: {
        tags,
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
        listGeofences(deps.pool, companyId, limit, offset),
        countGeofences(deps.pool, companyId),
      ]);
      return ok(geofences.map(presentGeofence), { limit, offset, total });
    },
  );

  app.get(
    '/geofences/:geofence_id',
    {
      schema: {
        tags,
        summary: 'Get a geofence',
        security,
        params: GeofenceParams,
        response: { 200: Envelope(Geofence), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const id = request.params.geofence_id;
      const geofence = isRecordId(id) ? await findGeofence(deps.pool, request.principal.companyId, id) : null;
      if (!geofence) throw notFound('geofence');
      return ok(presentGeofence(geofence));
    },
  );

  app.delete(
    '/geofences/:geofence_id',
    {
      schema: {
        tags,
        summary: 'Delete a geofence; subscriptions that name it stop watching it',
        security,
        params: GeofenceParams,
        response: { 200: Envelope(Geofence), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const id = request.params.geofence_id;
      const deleted = isRecordId(id) ? await deleteGeofence(deps.pool, request.principal.companyId, id) : null;
      if (!deleted) throw notFound('geofence');
      return ok(presentGeofence(deleted));
    },
  );
};
