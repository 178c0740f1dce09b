/**
 * `request.readPool`: where a public API request's reads go, chosen once per request by the
 * ReadRouter for its API key (a replica that has the key's writes, or the primary). Read routes
 * query it; writes always use the primary. After a request that may have written (any method but
 * GET and HEAD), the primary's WAL position is recorded for the key before the answer leaves, so
 * the key's next read, on whichever API process, sees the write.
 */
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.js';
import type { ReadRouter } from '../db/read-routing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The primary unless the route reads (GET, HEAD, or `config.replicaReads`) and a replica may answer. */
    readPool: Pool;
  }
  interface FastifyContextConfig {
    /** A route of another method that only reads what it answers (its small writes use the primary). */
    replicaReads?: boolean;
  }
}

const safeMethods = new Set(['GET', 'HEAD']);

/** Installs the choice in a scope whose requests are authenticated with an API key (request.principal). */
export function routeReads(api: FastifyInstance, router: ReadRouter, primary: Pool): void {
  api.decorateRequest('readPool', null as unknown as Pool);
  if (!router.enabled) {
    api.addHook('preHandler', (request, _reply, done) => {
      request.readPool = primary;
      done();
    });
    return;
  }
  api.addHook('preHandler', async (request) => {
    const reads = safeMethods.has(request.method) || request.routeOptions.config.replicaReads === true;
    request.readPool = reads ? await router.poolFor(request.principal.keyId) : primary;
  });
  api.addHook('onSend', async (request, _reply, payload) => {
    // request.principal is unset when authentication failed: nothing was written then.
    if (!safeMethods.has(request.method) && request.principal) await router.recordWrite(request.principal.keyId);
    return payload;
  });
}
