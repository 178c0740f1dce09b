/** Usage: this month's quantities and money per product, the discount tier, a daily chart, the projection. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ConsoleDeps } from '../plugin.js';
import { html } from '../html.js';
import { viewer } from '../viewer.js';
import { page } from '../views/layout.js';

export const usagePages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app) => {
  app.get('/console/usage', { schema: { hide: true } }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(
      page({
        title: 'Usage',
        section: 'usage',
        viewer: viewer(request),
        body: html`<p class="empty">Metering is not available on this deployment yet.</p>`,
      }),
    ),
  );
};
