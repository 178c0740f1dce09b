import type { ConsoleRole } from './console-users.js';
import type { Queryable } from './pool.js';

export interface ConsoleSessionRecord {
  id: string;
  userId: string;
  companyId: string;
  email: string;
  name: string;
  role: ConsoleRole;
  companyName: string;
  csrfToken: string;
  lastSeenAt: Date;
}

export interface SessionLifetime {
  idleMs: number;
  absoluteMs: number;
}

/**
 * SQL: the session `s` has ended as of $2 (idle longer than $3 ms, or older than $4 ms). One
 * definition for the lookup and both purges, which pass (…, now, idleMs, absoluteMs, …) there.
 */
const sessionEnded = `(s.last_seen_at <= $2::timestamptz - make_interval(secs => $3 / 1000.0)
                       OR s.created_at <= $2::timestamptz - make_interval(secs => $4 / 1000.0))`;

export async function insertConsoleSession(
  q: Queryable,
  userId: string,
  tokenHash: Buffer,
  csrfToken: string,
  now: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO console_sessions (user_id, token_hash, csrf_token, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)`,
    [userId, tokenHash, csrfToken, now],
  );
}

/**
 * The live session with this token hash: neither idle nor older than the absolute lifetime, and
 * its user not disabled. Expired rows are left for deleteExpiredConsoleSessions.
 */
export async function findConsoleSession(
  q: Queryable,
  tokenHash: Buffer,
  lifetime: SessionLifetime,
  now: Date,
): Promise<ConsoleSessionRecord | null> {
  const result = await q.query<ConsoleSessionRecord>({
    name: 'find-console-session',
    text: `SELECT s.id, s.user_id AS "userId", u.company_id AS "companyId", u.email, u.name, u.role, c.name AS "companyName",
                  s.csrf_token AS "csrfToken", s.last_seen_at AS "lastSeenAt"
           FROM console_sessions s JOIN console_users u ON u.id = s.user_id JOIN companies c ON c.id = u.company_id
           WHERE s.token_hash = $1 AND u.disabled_at IS NULL AND NOT ${sessionEnded}`,
    values: [tokenHash, now, lifetime.idleMs, lifetime.absoluteMs],
  });
  return result.rows[0] ?? null;
}

/** Moves the idle deadline; called at most once a minute per session to keep page views write-free. */
export async function touchConsoleSession(q: Queryable, id: string, now: Date): Promise<void> {
  await q.query(`UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1`, [id, now]);
}

export async function deleteConsoleSession(q: Queryable, tokenHash: Buffer): Promise<void> {
  await q.query(`DELETE FROM console_sessions WHERE token_hash = $1`, [tokenHash]);
}

/** Ends every other session of the user (a changed password signs out their other browsers). */
export async function deleteOtherConsoleSessions(q: Queryable, userId: string, keptSessionId: string): Promise<void> {
  await q.query(`DELETE FROM console_sessions WHERE user_id = $1 AND id <> $2`, [userId, keptSessionId]);
}

/** Deletes the user's sessions that can no longer be used; run at each sign-in so rows do not pile up. */
export async function deleteExpiredConsoleSessions(
  q: Queryable,
  userId: string,
  lifetime: SessionLifetime,
  now: Date,
): Promise<void> {
  await q.query(`DELETE FROM console_sessions s WHERE s.user_id = $1 AND ${sessionEnded}`, [
    userId,
    now,
    lifetime.idleMs,
    lifetime.absoluteMs,
  ]);
}

/** Stores a sealed one-time message for the session's next view of `page`; returns its id. */
export async function insertConsoleFlash(
  q: Queryable,
  sessionId: string,
  page: string,
  payloadCiphertext: Buffer,
): Promise<string> {
  const result = await q.query<{ id: string }>(
    `INSERT INTO console_flashes (session_id, page, payload_ciphertext) VALUES ($1, $2, $3) RETURNING id`,
    [sessionId, page, payloadCiphertext],
  );
  return result.rows[0]!.id;
}

/** Deletes and returns the session's message for `page` with this id: the first read takes it, later reads get null. */
export async function takeConsoleFlash(
  q: Queryable,
  sessionId: string,
  page: string,
  id: string,
): Promise<Buffer | null> {
  const result = await q.query<{ payload: Buffer }>(
    `DELETE FROM console_flashes WHERE id = $1 AND session_id = $2 AND page = $3 RETURNING payload_ciphertext AS payload`,
    [id, sessionId, page],
  );
  return result.rows[0]?.payload ?? null;
}

/**
 * Deletes up to `limit` flashes nobody will read: written before `before` (a flash is read by the
 * GET its redirect leads to, at once), or of a session that has ended; answers how many.
 */
export async function deleteUnreadConsoleFlashes(
  q: Queryable,
  before: Date,
  lifetime: SessionLifetime,
  now: Date,
  limit: number,
): Promise<number> {
  const result = await q.query<{ n: number }>({
    name: 'delete-unread-console-flashes',
    text: `WITH gone AS (
             DELETE FROM console_flashes WHERE id IN (
               SELECT f.id FROM console_flashes f JOIN console_sessions s ON s.id = f.session_id
               WHERE f.created_at < $1 OR ${sessionEnded}
               LIMIT $5 FOR UPDATE OF f SKIP LOCKED
             ) RETURNING 1
           )
           SELECT count(*)::int AS n FROM gone`,
    values: [before, now, lifetime.idleMs, lifetime.absoluteMs, limit],
  });
  return result.rows[0]!.n;
}
