/**
 * GET /v1/audit-events (docs/console.md "Activity"): the caller's company's audit log, the same
 * rows as the console's Activity page, paged newest first by an id cursor.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { listAuditEvents } from '../../db/audit-events.js';
import { presentAuditEvent } from '../../presenters/audit-event.js';
import { Envelope, ErrorEnvelope, authErrorResponses, ok } from '../../web/schemas.js';
import { AuditEvent, AuditEventsQuery } from '../schemas/audit.js';

export const auditEventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit-events',
    {
      schema: {
        tags: ['Audit'],
        operationId: 'listAuditEvents',
        summary: "Your company's audit log: keys, subscriptions, users and sign-ins, newest first (kept 365 days)",
        security: [{ bearerAuth: [] }],
        querystring: AuditEventsQuery,
        response: { 200: Envelope(Type.Array(AuditEvent)), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { limit, before } = request.query;
      const events = await listAuditEvents(
        request.readPool,
        request.principal.companyId,
        'next',
        before ?? null,
        limit,
      );
      return ok(events.map(presentAuditEvent), { limit, offset: 0, total: null });
    },
  );
};
