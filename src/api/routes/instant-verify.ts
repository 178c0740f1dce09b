/**
 * POST /v1/instant/verify (docs/verification.md): the current odometer,
 * location and, by level, condition and diagnostics of one of the caller's own active vehicles,
 * found by VIN (another company's VIN, or an inactive vehicle's, is 404). Paid and metered per
 * successful answer; an Idempotency-Key makes a retry return the same answer unbilled.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Pool } from '../../db/pool.js';
import { findActiveVehicleByVin } from '../../db/vehicles.js';
import { findLastMaintenanceAt } from '../../db/verification.js';
import { notFound } from '../../errors.js';
import type { Logger } from '../../log.js';
import { buildVerification } from '../../verification/verify.js';
import { answerPaidCall, PaidHeaders, paidAnswer, paidErrorResponses } from '../paid-call.js';
import { Envelope } from '../../web/schemas.js';
import { Verification, VerificationRequest } from '../schemas/verification.js';
import { requireValidVin } from '../vin.js';

export const instantVerifyRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; log: Logger; now: () => Date }> = async (
  app,
  deps,
) => {
  app.post(
    '/instant/verify',
    {
      schema: {
        tags: ['Instant verification'],
        operationId: 'verifyVehicle',
        summary: 'Verify one of your vehicles now: odometer with confidence, location, condition, diagnostics',
        description:
          'Levels: basic (odometer, location), standard (+ condition), premium (+ diagnostics). ' +
          'Billed per successful answer (docs/pricing.md). 400 names the VIN rule that failed in details.rule; ' +
          '404 when no active vehicle of yours has the VIN.',
        security: [{ bearerAuth: [] }],
        headers: PaidHeaders,
        body: VerificationRequest,
        response: { 200: paidAnswer(Envelope(Verification), false), ...paidErrorResponses },
      },
      // It only reads what it answers; its claim and usage rows are written on the primary (paid-call.ts).
      config: { replicaReads: true },
    },
    async (request, reply) => {
      const vin = requireValidVin(request.body.vin);
      const level = request.body.level ?? 'basic';
      const { companyId } = request.principal;
      return answerPaidCall(deps, request, reply, {
        product: 'verification',
        tier: level,
        fingerprint: { vin, level },
        work: async () => {
          const vehicle = await findActiveVehicleByVin(request.readPool, companyId, vin);
          if (!vehicle) throw notFound('vehicle with this VIN');
          const lastMaintenanceAt =
            level === 'basic' ? null : await findLastMaintenanceAt(request.readPool, vehicle.id);
          const data = buildVerification({
            vehicle,
            level,
            verificationId: randomUUID(),
            lastMaintenanceAt,
            now: deps.now(),
          });
          return { kind: 'json', data };
        },
      });
    },
  );
};
