/** How the console answers a failure: a page with an alert, or for a data call the API's error envelope. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../errors.js';
import { sendError, toAppError } from '../web/error-handler.js';
import { html } from './html.js';
import { alertBox, barePage } from './views/layout.js';

/** Page routes show a refusal as a page with an alert; data calls keep the API's error envelope. */
export function sendConsoleError(error: Error, request: FastifyRequest, reply: FastifyReply) {
  if (request.routeOptions.config?.consoleData) return sendError(error as AppError, request, reply);
  const appError = toAppError(error as AppError);
  if (appError.status >= 500) request.log.error({ err: error }, 'console request failed');
  if (appError.retryAfterSeconds !== null) reply.header('retry-after', String(appError.retryAfterSeconds));
  const title = appError.status === 401 ? 'Signed out' : appError.status === 404 ? 'Not found' : 'Refused';
  const next =
    appError.status === 401
      ? html`<p><a href="/console/sign-in">Sign in again</a></p>`
      : html`<p><a href="/console/vehicles">Back to the console</a></p>`;
  return reply
    .code(appError.status)
    .type('text/html; charset=utf-8')
    .send(barePage(title, html`${alertBox(appError.message)}${next}`));
}
