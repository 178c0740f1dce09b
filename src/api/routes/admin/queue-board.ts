/**
 * Operator view of the job queues: Bull Board under /admin/queues (docs/operations.md "Queue
 * board"). Behind the operator token, which a browser sends as the password of HTTP Basic. The
 * board's own routes carry no schemas of ours: it is a third-party UI with its own validation.
 */
import { createBullBoard } from '@bull-board/api';
import type { HTTPStatus } from '@bull-board/api/typings/app';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyError, FastifyInstance } from 'fastify';
import { queueNames } from '../../../queue/catalog.js';
import type { Queues } from '../../../queue/queues.js';
import { adminAuthentication } from '../../auth.js';
import { errorAnswer } from '../../../web/error-handler.js';

export const queueBoardPath = '/admin/queues';

export async function queueBoardRoutes(
  app: FastifyInstance,
  options: { queues: Queues; adminToken: string },
): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(queueBoardPath);
  createBullBoard({
    queues: queueNames.map((name) => new BullMQAdapter(options.queues.queue(name))),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Fleet queues' } },
  });
  // The board answers errors in its own context (the operator check's 401 included): in ours.
  // Its typings list only the statuses it answers itself; ours (401, 429, 503) pass through as is.
  serverAdapter.setErrorHandler((error) => errorAnswer(error as FastifyError) as { status: HTTPStatus; body: object });
  app.addHook('onRequest', adminAuthentication(options.adminToken, { browser: true }));
  await app.register(serverAdapter.registerPlugin(), { prefix: queueBoardPath });
}
