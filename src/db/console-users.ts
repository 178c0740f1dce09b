import type { Queryable } from './pool.js';

export interface ConsoleUserRecord {
  id: string;
  companyId: string;
  email: string;
  name: string;
  createdAt: Date;
  disabledAt: Date | null;
}

const userColumns = `id, company_id AS "companyId", email, name, created_at AS "createdAt", disabled_at AS "disabledAt"`;

/** Null when a live user already has this email (the partial unique index). */
export async function insertConsoleUser(
  q: Queryable,
  companyId: string,
  user: { email: string; name: string; passwordHash: string },
): Promise<ConsoleUserRecord | null> {
  const result = await q.query<ConsoleUserRecord>(
    `INSERT INTO console_users (company_id, email, name, password_hash) VALUES ($1, lower($2), $3, $4)
     ON CONFLICT (email) WHERE disabled_at IS NULL DO NOTHING RETURNING ${userColumns}`,
    [companyId, user.email, user.name, user.passwordHash],
  );
  return result.rows[0] ?? null;
}

/** The live user with this email and their password hash, for sign-in. */
export async function findConsoleUserForSignIn(
  q: Queryable,
  email: string,
): Promise<(ConsoleUserRecord & { passwordHash: string }) | null> {
  const result = await q.query<ConsoleUserRecord & { passwordHash: string }>(
    `SELECT ${userColumns}, password_hash AS "passwordHash" FROM console_users
     WHERE email = lower($1) AND disabled_at IS NULL`,
    [email],
  );
  return result.rows[0] ?? null;
}

/** Disables the user and deletes every session of theirs in one statement; null for an unknown id. */
export async function disableConsoleUser(q: Queryable, id: string): Promise<ConsoleUserRecord | null> {
  const result = await q.query<ConsoleUserRecord>(
    `WITH ended AS (DELETE FROM console_sessions WHERE user_id = $1)
     UPDATE console_users SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 RETURNING ${userColumns}`,
    [id],
  );
  return result.rows[0] ?? null;
}
