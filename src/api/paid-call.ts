/**
 * How a paid route answers (POST /v1/history/report, POST /v1/instant/verify): the optional
 * Idempotency-Key, the work, the bill and the answer, in that order (src/usage/metering.ts). An
 * error thrown by the work leaves unbilled, and releases the key so a retry runs again.
 *
 * A JSON answer is serialized with the route's response schema before it is billed, so a replay
 * sends the very bytes the first answer sent. A PDF is streamed; with a key it is collected first,
 * since its bytes are what a retry must get back.
 */
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type, { type TSchema } from 'typebox';
import type { StoredAnswer } from '../db/idempotency.js';
import type { Pool } from '../db/pool.js';
import type { MeteredProduct } from '../db/usage.js';
import { deleteUsage } from '../db/usage.js';
import type { Logger } from '../log.js';
import { billPaidRequest, claimPaidRequest, releasePaidRequest, requestHash } from '../usage/metering.js';
import { authErrorResponses, ErrorEnvelope, ok } from '../web/schemas.js';

/** Headers of a paid route: the optional Idempotency-Key (printable ASCII, as the IETF draft). */
export const PaidHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7E]+$',
      description: 'Makes a retry return the first answer without running or billing it again; kept 24 hours.',
    }),
  ),
});

/**
 * What a paid route refuses with: a bad request or VIN (400), no vehicle for it (404), the same
 * Idempotency-Key still running (409), a key reused for another request (422), and auth errors.
 */
export const paidErrorResponses = {
  400: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  422: ErrorEnvelope,
  ...authErrorResponses,
};

/**
 * The 200 answer of a paid route, by content type (a replay sends stored bytes, so the JSON is
 * serialized with the `application/json` schema before it is stored).
 */
export function paidAnswer<T extends TSchema>(json: T, pdf: boolean) {
  return {
    description: 'The answer; a replay for a repeated Idempotency-Key carries Idempotent-Replayed: true.',
    content: {
      'application/json': { schema: json },
      ...(pdf
        ? {
            'application/pdf': {
              schema: Type.String({ format: 'binary', description: 'The report as a PDF, streamed.' }),
            },
          }
        : {}),
    },
  };
}

export type PaidWork = { kind: 'json'; data: unknown } | { kind: 'pdf'; stream: Readable };

export interface PaidCall {
  product: MeteredProduct;
  tier: string;
  /** What decides the answer (body and format), compared when a key is reused. */
  fingerprint: unknown;
  work(): Promise<PaidWork>;
}

export interface PaidCallDeps {
  pool: Pool;
  log: Logger;
  now: () => Date;
}

const jsonType = 'application/json; charset=utf-8';
const pdfType = 'application/pdf';

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export async function answerPaidCall(
  deps: PaidCallDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  call: PaidCall,
): Promise<FastifyReply> {
  const now = deps.now();
  const { companyId } = request.principal;
  const key = (request.headers as { 'idempotency-key'?: string })['idempotency-key'];
  const scope = key === undefined ? null : { companyId, endpoint: request.routeOptions.url ?? request.url, key };

  let claimedAt: Date | null = null;
  if (scope) {
    const claim = await claimPaidRequest(deps.pool, scope, requestHash(call.fingerprint), now);
    if (claim.kind === 'replay') {
      const { answer } = claim;
      return reply
        .code(answer.statusCode)
        .type(answer.contentType)
        .header('idempotent-replayed', 'true')
        .send(answer.body);
    }
    claimedAt = claim.claimedAt;
  }

  const bill = (answer: StoredAnswer | null) =>
    billPaidRequest(deps.pool, {
      companyId,
      product: call.product,
      tier: call.tier,
      requestId: request.id,
      now,
      idempotency: scope && claimedAt && answer ? { scope, claimedAt, answer } : null,
    });

  // The content type is set only when the answer is sent: an error meanwhile leaves as the JSON error envelope.
  let outcome: { answer: StoredAnswer } | { stream: Readable };
  try {
    const work = await call.work();
    if (work.kind === 'json') {
      const body = Buffer.from(reply.serializeInput(ok(work.data), '200', 'application/json') as string);
      outcome = { answer: { statusCode: 200, contentType: jsonType, body } };
      await bill(outcome.answer);
    } else if (scope) {
      outcome = { answer: { statusCode: 200, contentType: pdfType, body: await collect(work.stream) } };
      await bill(outcome.answer);
    } else {
      outcome = { stream: work.stream };
      await bill(null);
    }
  } catch (error) {
    if (scope && claimedAt) {
      await releasePaidRequest(deps.pool, scope, claimedAt).catch((err: unknown) =>
        deps.log.warn({ err }, 'could not release an idempotency key'),
      );
    }
    throw error;
  }

  if ('answer' in outcome) {
    const { answer } = outcome;
    return reply.code(answer.statusCode).type(answer.contentType).send(answer.body);
  }
  const { stream } = outcome;
  // Billed before the first byte; a stream that fails is taken back off the bill.
  stream.once('error', (err) => {
    deps.log.warn({ err }, 'a billed PDF stream failed; the request is not billed');
    deleteUsage(deps.pool, companyId, call.product, request.id).catch((e: unknown) =>
      deps.log.error({ err: e }, 'could not take back the bill of a failed PDF stream'),
    );
  });
  return reply.code(200).type(pdfType).send(stream);
}
