/**
 * GET /v1/usage?month=YYYY-MM (docs/pricing.md): what the caller's company used and
 * owes in a UTC month, priced with the graduated discounts. A month after the current one has no
 * usage yet and is refused.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidRequest } from '../../errors.js';
import { monthOf } from '../../usage/months.js';
import { loadUsageReport } from '../../usage/usage-report.js';
import { Envelope, ErrorEnvelope, authErrorResponses, ok } from '../../web/schemas.js';
import { Usage, UsageQuery } from '../schemas/usage.js';

export const usageRoutes: FastifyPluginAsyncTypebox<{ now: () => Date }> = async (app, deps) => {
  app.get(
    '/usage',
    {
      schema: {
        tags: ['Usage'],
        operationId: 'getUsage',
        summary: "Your company's usage and charges in a month, with discounts and a month-end projection",
        security: [{ bearerAuth: [] }],
        querystring: UsageQuery,
        response: { 200: Envelope(Usage), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const now = deps.now();
      const current = monthOf(now);
      const month = request.query.month ?? current;
      // YYYY-MM strings order like the months they name.
      if (month > current) throw invalidRequest([{ field: 'month', message: 'is after the current month' }]);
      return ok(await loadUsageReport(request.readPool, request.principal.companyId, month, now));
    },
  );
};
