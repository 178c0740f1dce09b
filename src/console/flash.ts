/**
 * One-time messages across POST/redirect/GET (docs/console.md). A form's POST answers 303 to its page
 * with `?created=<id>` (what a create made that is shown once: the new key, the signing secret, a
 * temporary password) or
 * `?refused=<id>` (why the action was refused, with what was typed so the form shows it again), and
 * that page shows the message once. Messages are stored server-side, sealed with SECRETS_KEY, and
 * read by their id and the session together, so another session (or a leaked URL) cannot read
 * them; the read deletes it, so a reload or Back shows it no more and submits nothing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isRecordId } from '../domain/ids.js';
import type { Config } from '../config.js';
import { deleteInBatches } from '../db/batched-delete.js';
import { deleteUnreadConsoleFlashes, insertConsoleFlash, takeConsoleFlash } from '../db/console-sessions.js';
import type { Pool, Queryable } from '../db/pool.js';
import { AppError } from '../errors.js';
import { decryptJson, encryptJson } from '../security/secrets.js';

/** What a form had typed, for the page to show again after a refusal (null: a button, nothing typed); never a secret. */
interface Drafts {
  'api-keys': { name: string };
  webhooks: { url: string; events: string[] } | null;
  monitoring: null;
  team: { email: string; name: string; role: string } | null;
  account: null;
}

/** What each kind of message carries, per page. */
export interface Flashes {
  created: {
    'api-keys': { name: string | null; key: string };
    webhooks: { url: string; signingSecret: string };
    team: { email: string; temporaryPassword: string };
  };
  refused: { [P in keyof Drafts]: { error: string; draft: Drafts[P] } };
}

export type FlashKind = keyof Flashes;

type FlashDeps = { pool: Pool; config: Pick<Config, 'secretsKey'> };

/** A flash is read by the GET its redirect leads to, within seconds; one unread this long never will be. */
export const unreadFlashLifetimeMs = 10 * 60_000;

/** The `page` column: the page that shows the message, and for a refusal the kind too. */
function slot(kind: FlashKind, page: string): string {
  return kind === 'created' ? page : `${page}:${kind}`;
}

/** Stores the message (a create's in its own transaction, beside what it created); returns the id for the redirect. */
export function putFlash<K extends FlashKind, P extends keyof Flashes[K] & string>(
  q: Queryable,
  secretsKey: Buffer,
  sessionId: string,
  kind: K,
  page: P,
  message: Flashes[K][P],
): Promise<string> {
  return insertConsoleFlash(q, sessionId, slot(kind, page), encryptJson(secretsKey, message));
}

/**
 * The message the redirect named, taken: `null` when there is none (no id, already shown, or not
 * this session's). Only a GET takes it: a HEAD (answered by the same handler) shows nothing.
 */
export async function takeFlash<K extends FlashKind, P extends keyof Flashes[K] & string>(
  deps: FlashDeps,
  request: FastifyRequest,
  kind: K,
  page: P,
  id: string | undefined,
): Promise<Flashes[K][P] | null> {
  if (request.method !== 'GET' || id === undefined || !isRecordId(id)) return null;
  const sealed = await takeConsoleFlash(deps.pool, request.consoleSession.id, slot(kind, page), id);
  return sealed ? decryptJson<Flashes[K][P]>(deps.config.secretsKey, sealed) : null;
}

/** A `?<kind>=<id>` link of `page`. */
export function flashUrl(kind: FlashKind, page: string, id: string): string {
  return `/console/${page}?${kind}=${id}`;
}

/** The refusal a failed action threw (a 4xx AppError); anything else is rethrown. */
export function asRefusal(failure: unknown): AppError {
  if (failure instanceof AppError && failure.status < 500) return failure;
  throw failure;
}

/**
 * Answers a refused action with 303 to its page, which shows the refusal once as an alert (and
 * the form as it was typed): a reload repeats the GET, never the POST, so an action refused now
 * is not done later by a reload.
 */
export async function redirectRefused<P extends keyof Flashes['refused'] & string>(
  deps: FlashDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: P,
  message: Flashes['refused'][P],
): Promise<FastifyReply> {
  const id = await putFlash(deps.pool, deps.config.secretsKey, request.consoleSession.id, 'refused', page, message);
  return reply.redirect(flashUrl('refused', page, id), 303);
}

/**
 * Deletes the flashes nobody will read (hourly, maintenance.purge-expired): older than
 * unreadFlashLifetimeMs, or of a session that has ended. Otherwise a sealed key or secret whose
 * user never signs in again would stay. Answers how many.
 */
export function purgeUnreadFlashes(
  pool: Pool,
  config: Pick<Config, 'consoleSessionIdleMs' | 'consoleSessionAbsoluteMs'>,
  now: Date,
): Promise<number> {
  const before = new Date(now.getTime() - unreadFlashLifetimeMs);
  const lifetime = { idleMs: config.consoleSessionIdleMs, absoluteMs: config.consoleSessionAbsoluteMs };
  return deleteInBatches((limit) => deleteUnreadConsoleFlashes(pool, before, lifetime, now, limit));
}
