/**
 * What a company's admins do to their team in the console (DESIGN §12, "Team"), and what every
 * user does to their own password. Each change and its audit row commit together; a change that
 * could leave the company without an admin (disable, demote) locks the live admins first, so two
 * admins acting on each other at once cannot both succeed.
 */
import { recordAudit, userActor } from '../audit/record.js';
import type { AuditActor } from '../db/audit-events.js';
import { deleteOtherConsoleSessions } from '../db/console-sessions.js';
import {
  disableConsoleUser,
  findConsoleUserPasswordHash,
  findLiveCompanyConsoleUser,
  insertConsoleUser,
  lockLiveCompanyAdmins,
  setConsoleUserRole,
  updateConsoleUserPassword,
  type ConsoleRole,
  type ConsoleUserRecord,
} from '../db/console-users.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { AppError, invalidRequest, notFound } from '../errors.js';
import { generatePassword, hashPassword, verifyPassword } from '../security/passwords.js';

export interface InvitedUser {
  user: ConsoleUserRecord;
  /** Shown once to the admin who invited; only its hash is kept. */
  temporaryPassword: string;
}

/**
 * Adds a user with a temporary password. `alongside` runs in the same transaction (the flash that
 * shows the password once). 400 when a live user already has the email.
 */
export async function inviteUser(
  pool: Pool,
  companyId: string,
  actor: AuditActor,
  invite: { email: string; name: string; role: ConsoleRole },
  alongside: (tx: Queryable, invited: InvitedUser) => Promise<void>,
): Promise<InvitedUser> {
  const temporaryPassword = generatePassword();
  const passwordHash = await hashPassword(temporaryPassword);
  return withTransaction(pool, async (tx) => {
    const user = await insertConsoleUser(tx, companyId, { ...invite, passwordHash });
    if (!user) throw invalidRequest([{ field: 'email', message: 'is already used by another console user' }]);
    await recordAudit(tx, companyId, actor, 'user.invited', { type: 'user', id: user.id });
    const invited = { user, temporaryPassword };
    await alongside(tx, invited);
    return invited;
  });
}

/** 404 unless the company has this live user; 409 when it is its last admin. */
async function lockOtherThanLastAdmin(
  tx: Queryable,
  companyId: string,
  userId: string,
  refusal: string,
): Promise<ConsoleUserRecord> {
  const admins = await lockLiveCompanyAdmins(tx, companyId);
  const user = await findLiveCompanyConsoleUser(tx, companyId, userId);
  if (!user) throw notFound('user');
  if (user.role === 'admin' && admins.length <= 1) throw new AppError('INVALID_STATE_TRANSITION', refusal);
  return user;
}

/** Disables a member; their sessions end at once. */
export function disableTeamMember(
  pool: Pool,
  companyId: string,
  actor: AuditActor,
  userId: string,
): Promise<ConsoleUserRecord> {
  return withTransaction(pool, async (tx) => {
    await lockOtherThanLastAdmin(tx, companyId, userId, 'the last admin cannot be disabled; make another admin first');
    const user = (await disableConsoleUser(tx, userId))!;
    await recordAudit(tx, companyId, actor, 'user.disabled', { type: 'user', id: user.id });
    return user;
  });
}

/** Changes a member's role; the change applies to their next request. */
export function changeRole(
  pool: Pool,
  companyId: string,
  actor: AuditActor,
  userId: string,
  role: ConsoleRole,
): Promise<ConsoleUserRecord> {
  return withTransaction(pool, async (tx) => {
    const user =
      role === 'admin'
        ? await findLiveCompanyConsoleUser(tx, companyId, userId)
        : await lockOtherThanLastAdmin(
            tx,
            companyId,
            userId,
            'the last admin cannot be demoted; make another admin first',
          );
    if (!user) throw notFound('user');
    if (user.role === role) return user;
    const changed = (await setConsoleUserRole(tx, companyId, userId, role))!;
    await recordAudit(tx, companyId, actor, 'user.role_changed', { type: 'user', id: userId });
    return changed;
  });
}

/**
 * Sets the user's own password after checking the current one, and ends their other sessions (a
 * browser left signed in elsewhere, perhaps by whoever learnt the old password). 400 when the
 * current password is wrong.
 */
export async function changeOwnPassword(
  pool: Pool,
  session: { id: string; userId: string; companyId: string; email: string },
  current: string,
  next: string,
): Promise<void> {
  const stored = await findConsoleUserPasswordHash(pool, session.userId);
  if (!stored || !(await verifyPassword(current, stored))) {
    throw invalidRequest([{ field: 'current', message: 'is not your current password' }]);
  }
  const passwordHash = await hashPassword(next);
  await withTransaction(pool, async (tx) => {
    await updateConsoleUserPassword(tx, session.userId, passwordHash);
    await deleteOtherConsoleSessions(tx, session.userId, session.id);
    await recordAudit(tx, session.companyId, userActor(session), 'user.password_changed', {
      type: 'user',
      id: session.userId,
    });
  });
}
