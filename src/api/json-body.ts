/**
 * The JSON body parser of the public and operator APIs. A body is bounded before any validator or
 * handler sees it: at most BODY_LIMIT_BYTES (fastify's bodyLimit), strict UTF-8, at most
 * `maxJsonDepth` levels of nesting, and only strings Postgres can store (text and jsonb refuse NUL
 * and lone surrogates, which would otherwise surface as a 500). `__proto__` keys and
 * `constructor.prototype` are refused, as fastify's default parser refuses them.
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest, type FieldError } from '../errors.js';
import { unstorableReason } from '../web/validation.js';

/** Levels of arrays and objects; the deepest body any route accepts has four. */
export const maxJsonDepth = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The first problem in a parsed body, walked iteratively so no depth can exhaust the stack. */
function bodyProblem(root: unknown): FieldError | null {
  // Paths name the field as validation errors do (`customer.address.street`); the root is `body`.
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value: root, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = unstorableReason(value);
      if (problem) return { field: path || 'body', message: problem };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= maxJsonDepth) return { field: path || 'body', message: `nests deeper than ${maxJsonDepth} levels` };
    const child = (key: string | number) => (path ? `${path}.${key}` : String(key));
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, depth: depth + 1, path: child(i) }));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = unstorableReason(key);
      if (keyProblem) return { field: path || 'body', message: `has a key that ${keyProblem}` };
      const field = child(key);
      if (key === '__proto__') return { field, message: 'is not allowed' };
      if (key === 'constructor' && item !== null && typeof item === 'object' && Object.hasOwn(item, 'prototype')) {
        return { field, message: 'is not allowed' };
      }
      stack.push({ value: item, depth: depth + 1, path: field });
    }
  }
  return null;
}

/** The parsed body, an object, or `undefined` for an empty one (as if none was sent); throws INVALID_REQUEST. */
export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw invalidRequest([{ field: 'body', message: 'is not valid UTF-8' }]);
  }
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest([{ field: 'body', message: 'is not valid JSON' }]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidRequest([{ field: 'body', message: 'must be a JSON object' }]);
  }
  const problem = bodyProblem(value);
  if (problem) throw invalidRequest([problem]);
  return value;
}

/**
 * Replaces fastify's body parsers in `app` and its children with this one. A route with a body schema that is
 * called without a body sees `{}`, so its validator fills the defaults into the body the handler
 * reads.
 */
export function installJsonBodies(app: FastifyInstance): void {
  // JSON is the only body these APIs take; fastify's text/plain parser would hand a handler a string.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, raw, done) => {
    try {
      done(null, parseJsonBody(raw as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
}
