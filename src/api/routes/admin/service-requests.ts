/** Operator API: a service request creates a run or folds into the vehicle's open run. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withTransaction, type Pool } from '../../../db/pool.js';
import type { Queues } from '../../../queue/queues.js';
import { afterRunChanges } from '../../../queue/enqueue-runs.js';
import { findRun } from '../../../db/runs.js';
import { submitServiceRequest } from '../../../runs/service-requests.js';
import { presentRun } from '../../../presenters/run.js';
import { ServiceRequestCreate, ServiceRequestResult } from '../../schemas/admin.js';
import { Envelope, ErrorEnvelope, ok } from '../../../web/schemas.js';
import { locationInput } from './request-mapping.js';
import { CompanyParams, adminErrors, adminSecurity, requireCompany } from './shared.js';

export const serviceRequestAdminRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; queues: Queues }> = async (
  app,
  deps,
) => {
  app.post(
    '/companies/:company_id/service-requests',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminCreateServiceRequest',
        summary: "Request service: creates a run (201) or folds into the vehicle's open run (200)",
        security: adminSecurity,
        params: CompanyParams,
        body: ServiceRequestCreate,
        response: {
          200: Envelope(ServiceRequestResult),
          201: Envelope(ServiceRequestResult),
          409: ErrorEnvelope,
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      const company = await requireCompany(deps.pool, request.params.company_id);
      const { body } = request;
      const customer = body.customer
        ? {
            name: body.customer.name ?? null,
            email: body.customer.email ?? null,
            phone: body.customer.phone ?? null,
            address: body.customer.address
              ? {
                  street: body.customer.address.street ?? null,
                  city: body.customer.address.city ?? null,
                  state: body.customer.address.state ?? null,
                  postal_code: body.customer.address.postal_code ?? null,
                }
              : null,
            display_address: body.customer.display_address ?? null,
          }
        : null;
      const outcome = await withTransaction(deps.pool, (tx) =>
        submitServiceRequest(tx, company.id, {
          vehicleId: body.vehicle_id,
          title: body.title ?? null,
          description: body.description ?? null,
          items: body.items.map((item) => ({
            title: item.title,
            description: item.description ?? null,
            type: item.type,
          })),
          customer,
          preferredStart: body.preferred_start ? new Date(body.preferred_start) : null,
          preferredEnd: body.preferred_end ? new Date(body.preferred_end) : null,
          location: body.location ? locationInput(body.location) : null,
        }),
      );
      await afterRunChanges(
        deps.queues,
        request.log,
        outcome.folded ? [] : [{ companyId: company.id, runId: outcome.runId }],
      );
      const run = (await findRun(deps.pool, company.id, outcome.runId))!;
      return reply.code(outcome.folded ? 200 : 201).send(ok({ run: presentRun(run), folded: outcome.folded }));
    },
  );
};
