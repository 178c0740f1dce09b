/**
 * One-time messages across POST/redirect/GET (docs/console.md): a create answers 303 to its page with
 * `?created=<id>`, and that page shows what was created (the new key, the signing secret) once.
 * The message is stored server-side, sealed with SECRETS_KEY, and read by its id and the session
 * together, so another session (or a leaked URL) cannot read it; the read deletes it, so a reload
 * or Back shows it no more and creates nothing.
 */
import type { FastifyRequest } from 'fastify';
import { isRecordId } from '../api/schemas/common.js';
import type { Config } from '../config.js';
import { insertConsoleFlash, takeConsoleFlash } from '../db/console-sessions.js';
import type { Pool, Queryable } from '../db/pool.js';
import { decryptJson, encryptJson } from '../security/secrets.js';

/** What each page's flash carries. */
export interface Flashes {
  'api-keys': { name: string | null; key: string };
  webhooks: { url: string; signingSecret: string };
}

export type FlashPage = keyof Flashes;

/** Stores the message (in the caller's transaction, beside what it created); returns the id for the redirect. */
export function putFlash<P extends FlashPage>(
  q: Queryable,
  secretsKey: Buffer,
  sessionId: string,
  page: P,
  message: Flashes[P],
): Promise<string> {
  return insertConsoleFlash(q, sessionId, page, encryptJson(secretsKey, message));
}

/**
 * The message the redirect named, taken: `null` when there is none (no id, already shown, or not
 * this session's). Only a GET takes it: a HEAD (answered by the same handler) shows nothing.
 */
export async function takeFlash<P extends FlashPage>(
  deps: { pool: Pool; config: Pick<Config, 'secretsKey'> },
  request: FastifyRequest,
  page: P,
  id: string,
): Promise<Flashes[P] | null> {
  if (request.method !== 'GET' || !isRecordId(id)) return null;
  const sealed = await takeConsoleFlash(deps.pool, request.consoleSession.id, page, id);
  return sealed ? decryptJson<Flashes[P]>(deps.config.secretsKey, sealed) : null;
}

/** A `?created=<id>` link of `page`. */
export function flashUrl(page: FlashPage, id: string): string {
  return `/console/${page}?created=${id}`;
}
