import type { FastifyRequest } from 'fastify';
import type { Viewer } from './views/layout.js';

/** Who is looking, for the page shell (name, role, company, the form token). */
export function viewer(request: FastifyRequest): Viewer {
  const session = request.consoleSession;
  return { name: session.name, role: session.role, companyName: session.companyName, csrfToken: session.csrfToken };
}
