/** Usage: this month's (or a chosen month's) quantities and money per product, discount tiers, a daily chart, the projection. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { monthOf, monthPattern } from '../../usage/months.js';
import { loadUsageReport } from '../../usage/usage-report.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import { usagePage } from '../views/usage.js';

// An empty month field (the form sent without a choice) means the current month.
const UsageQuery = Type.Object({
  month: Type.Optional(Type.Union([Type.String({ pattern: monthPattern, maxLength: 7 }), Type.Literal('')])),
});

export const usagePages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.get('/console/usage', { schema: { hide: true, querystring: UsageQuery } }, async (request, reply) => {
    const now = deps.now();
    const current = monthOf(now);
    // The same report as GET /v1/usage, for the session's company.
    const report = await loadUsageReport(
      deps.pool,
      request.consoleSession.companyId,
      request.query.month || current,
      now,
    );
    return reply.type('text/html; charset=utf-8').send(usagePage(viewer(request), report, current));
  });
};
