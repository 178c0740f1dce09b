/**
 * Caps on what one company may create (webhook subscriptions; monitoring subscriptions use the
 * same): the count and the insert run in one transaction under a lock on (company, resource), so
 * concurrent creations cannot overshoot. Over the cap answers 409 LIMIT_REACHED; deleting one
 * makes room.
 */
import { lockCompanyResource } from './advisory-locks.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';
import { AppError } from '../errors.js';

export interface CompanyCap {
  /** What is counted, as `details.resource` names it (a token such as `api_keys` or a plural name). */
  resource: string;
  /** Plural name of what is counted, as the message says it; `resource` unless given. */
  counted?: string;
  limit: number;
  count(q: Queryable, companyId: string): Promise<number>;
  /** How to make room, as the message says it; `delete one first` unless given. */
  makeRoom?: string;
}

export async function createWithinCap<T>(
  pool: Pool,
  cap: CompanyCap,
  companyId: string,
  create: (tx: Queryable) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (tx) => {
    await lockCompanyResource(tx, companyId, cap.resource);
    const count = await cap.count(tx, companyId);
    if (count >= cap.limit) {
      throw new AppError(
        'LIMIT_REACHED',
        `the company has ${count} ${cap.counted ?? cap.resource}, the most it may have (${cap.limit}); ${cap.makeRoom ?? 'delete one first'}`,
        { resource: cap.resource, limit: cap.limit },
      );
    }
    return create(tx);
  });
}
