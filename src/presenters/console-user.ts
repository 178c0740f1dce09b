/** A console user as the operator API shows it (never the password hash). */
import type { ConsoleUserRecord } from '../db/console-users.js';

export function presentUser(user: ConsoleUserRecord) {
  return {
    id: user.id,
    company_id: user.companyId,
    email: user.email,
    name: user.name,
    role: user.role,
    created_at: user.createdAt.toISOString(),
    disabled_at: user.disabledAt?.toISOString() ?? null,
  };
}
