import type { Queryable } from './pool.js';

/** Admins manage the team; developers do everything else (DESIGN §12, "Team"). */
export const consoleRoles = ['admin', 'developer'] as const;
export type ConsoleRole = (typeof consoleRoles)[number];

export interface ConsoleUserRecord {
  id: string;
  companyId: string;
  email: string;
  name: string;
  role: ConsoleRole;
  createdAt: Date;
  disabledAt: Date | null;
}

const userColumns = `id, company_id AS "companyId", email, name, role, created_at AS "createdAt", disabled_at AS "disabledAt"`;

/** Null when a live user already has this email (the partial unique index). */
export async function insertConsoleUser(
  q: Queryable,
  companyId: string,
  user: { email: string; name: string; passwordHash: string; role: ConsoleRole },
): Promise<ConsoleUserRecord | null> {
  const result = await q.query<ConsoleUserRecord>(
    `INSERT INTO console_users (company_id, email, name, password_hash, role) VALUES ($1, lower($2), $3, $4, $5)
     ON CONFLICT (email) WHERE disabled_at IS NULL DO NOTHING RETURNING ${userColumns}`,
    [companyId, user.email, user.name, user.passwordHash, user.role],
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

/** The live user's password hash (Change password checks the current one); null when disabled. */
export async function findConsoleUserPasswordHash(q: Queryable, id: string): Promise<string | null> {
  const result = await q.query<{ passwordHash: string }>(
    `SELECT password_hash AS "passwordHash" FROM console_users WHERE id = $1 AND disabled_at IS NULL`,
    [id],
  );
  return result.rows[0]?.passwordHash ?? null;
}

export async function updateConsoleUserPassword(q: Queryable, id: string, passwordHash: string): Promise<void> {
  await q.query(`UPDATE console_users SET password_hash = $2 WHERE id = $1`, [id, passwordHash]);
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

/** The company's users, live ones first, then by email. */
export async function listCompanyConsoleUsers(q: Queryable, companyId: string): Promise<ConsoleUserRecord[]> {
  const result = await q.query<ConsoleUserRecord>(
    `SELECT ${userColumns} FROM console_users WHERE company_id = $1
     ORDER BY disabled_at IS NOT NULL, email, created_at DESC`,
    [companyId],
  );
  return result.rows;
}

/**
 * Locks the company's live admins (held to the end of the transaction) and answers their ids. A
 * change that could leave no admin (disable, demote) takes this first: of two admins disabling
 * each other at once, the second waits, then sees one admin left and is refused.
 */
export async function lockLiveCompanyAdmins(q: Queryable, companyId: string): Promise<string[]> {
  const result = await q.query<{ id: string }>(
    `SELECT id FROM console_users WHERE company_id = $1 AND role = 'admin' AND disabled_at IS NULL ORDER BY id FOR UPDATE`,
    [companyId],
  );
  return result.rows.map((r) => r.id);
}

/** One live user of the company; null when the company has none with this id. */
export async function findLiveCompanyConsoleUser(
  q: Queryable,
  companyId: string,
  id: string,
): Promise<ConsoleUserRecord | null> {
  const result = await q.query<ConsoleUserRecord>(
    `SELECT ${userColumns} FROM console_users WHERE id = $1 AND company_id = $2 AND disabled_at IS NULL`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

/** Sets a live user's role; null when the company has no such live user. */
export async function setConsoleUserRole(
  q: Queryable,
  companyId: string,
  id: string,
  role: ConsoleRole,
): Promise<ConsoleUserRecord | null> {
  const result = await q.query<ConsoleUserRecord>(
    `UPDATE console_users SET role = $3 WHERE id = $1 AND company_id = $2 AND disabled_at IS NULL RETURNING ${userColumns}`,
    [id, companyId, role],
  );
  return result.rows[0] ?? null;
}
