/**
 * Counts route handlers that are still running, so shutdown can wait for them before the
 * database pool closes. Fastify's own hooks cannot: a request whose client hung up fires
 * onRequestAbort and never onResponse, while its handler keeps going.
 */
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';

export function trackInFlightHandlers(app: FastifyInstance, drainTimeoutMs = 10_000): void {
  let running = 0;
  let idle: (() => void) | null = null;

  // Once closing, each answer still to come closes its connection: the server's close waits for
  // every connection to end, and a kept-alive one would stay open for keepAliveTimeout (72 s).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    // Only async handlers: callback-style plugin handlers (static files) manage their own replies.
    if (handler.constructor.name !== 'AsyncFunction') return;
    route.handler = async function tracked(this: FastifyInstance, request, reply) {
      running++;
      try {
        return await handler.call(this, request, reply);
      } finally {
        running--;
        if (running === 0) idle?.();
      }
    } as RouteHandlerMethod;
  });

  app.addHook('onClose', async () => {
    if (running === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainTimeoutMs);
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  });
}
