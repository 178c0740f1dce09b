import type { Queryable } from './pool.js';

export interface ConsoleSessionRecord {
  id: string;
  userId: string;
  companyId: string;
  email: string;
  name: string;
  companyName: string;
  csrfToken: string;
  lastSeenAt: Date;
}

export interface SessionLifetime {
  idleMs: number;
  absoluteMs: number;
}

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
    text: `SELECT s.id, s.user_id AS "userId", u.company_id AS "companyId", u.email, u.name, c.name AS "companyName",
                  s.csrf_token AS "csrfToken", s.last_seen_at AS "lastSeenAt"
           FROM console_sessions s JOIN console_users u ON u.id = s.user_id JOIN companies c ON c.id = u.company_id
           WHERE s.token_hash = $1 AND u.disabled_at IS NULL
             AND s.last_seen_at > $2::timestamptz - make_interval(secs => $3 / 1000.0)
             AND s.created_at > $2::timestamptz - make_interval(secs => $4 / 1000.0)`,
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

/** Deletes the user's sessions that can no longer be used; run at each sign-in so rows do not pile up. */
export async function deleteExpiredConsoleSessions(
  q: Queryable,
  userId: string,
  lifetime: SessionLifetime,
  now: Date,
): Promise<void> {
  await q.query(
    `DELETE FROM console_sessions WHERE user_id = $1
       AND (last_seen_at <= $2::timestamptz - make_interval(secs => $3 / 1000.0)
            OR created_at <= $2::timestamptz - make_interval(secs => $4 / 1000.0))`,
    [userId, now, lifetime.idleMs, lifetime.absoluteMs],
  );
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
