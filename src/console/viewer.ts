import type { FastifyRequest } from 'fastify';
import type { Viewer } from './views/layout.js';

/** Who is looking, for the page shell (name, company, the form token). */
export function viewer(request: FastifyRequest): Viewer {
  const session = request.consoleSession;
  return { name: session.name, companyName: session.companyName, csrfToken: session.csrfToken };
}
