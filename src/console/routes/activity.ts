/** Activity (the company's audit log) and Requests (its API requests of the last 7 days). */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listApiKeys } from '../../db/api-keys.js';
import { listApiRequests, type ApiRequestRecord } from '../../db/api-request-log.js';
import { listAuditEvents } from '../../db/audit-events.js';
import { decodeCursor, encodeCursor, parseTimeCursor, readPage, timeCursor } from '../../domain/keyset-page.js';
import { requestLogRetentionDays } from '../../domain/partitions.js';
import { isRecordId } from '../../domain/ids.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import { activityPage } from '../views/activity.js';
import { requestsPage, statusClasses } from '../views/requests.js';
import { PageFields, pageRequestOf } from './paging.js';

/** Rows per page of both lists. */
const pageRows = 50;

const PageQuery = Type.Object(PageFields);
const RequestsQuery = Type.Object({
  ...PageFields,
  status: Type.Optional(Type.String({ maxLength: 3 })),
  key: Type.Optional(Type.String({ maxLength: 100 })),
});

const dayMs = 24 * 60 * 60 * 1000;

export const activityPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.get('/console/activity', { schema: { hide: true, querystring: PageQuery } }, async (request, reply) => {
    const { companyId } = request.consoleSession;
    const events = await readPage(
      pageRequestOf(request.query, pageRows),
      (direction, cursor, limit) => {
        const [id] = (cursor && decodeCursor(cursor, 1)) || [];
        const known = id !== undefined && /^\d{1,18}$/.test(id);
        return listAuditEvents(deps.pool, companyId, known ? direction : 'next', known ? id : null, limit);
      },
      (event) => encodeCursor([event.id]),
    );
    return reply.type('text/html; charset=utf-8').send(activityPage(viewer(request), events));
  });

  app.get('/console/requests', { schema: { hide: true, querystring: RequestsQuery } }, async (request, reply) => {
    const { companyId } = request.consoleSession;
    const statusClass = statusClasses.find((c) => request.query.status === `${c}xx`) ?? null;
    const keyId = request.query.key && isRecordId(request.query.key) ? request.query.key : null;
    const filter = { statusClass, apiKeyId: keyId };
    const since = new Date(deps.now().getTime() - requestLogRetentionDays * dayMs);
    const requests = await readPage(
      pageRequestOf(request.query, pageRows),
      (direction, cursor, limit) => {
        const at = parseTimeCursor(cursor);
        const position = at && /^\d{1,18}$/.test(at.id) ? { requestedAt: at.at, id: at.id } : null;
        return listApiRequests(deps.pool, companyId, filter, since, position ? direction : 'next', position, limit);
      },
      (r: ApiRequestRecord) => timeCursor(r.requestedAt, r.id),
    );
    const keys = await listApiKeys(deps.pool, companyId);
    return reply
      .type('text/html; charset=utf-8')
      .send(requestsPage(viewer(request), { requests, keys, filter: { statusClass, keyId } }));
  });
};
