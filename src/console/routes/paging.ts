/** The `?next=` and `?previous=` links of the console's paged lists (src/domain/keyset-page.ts). */
import Type from 'typebox';
import type { PageRequest } from '../../domain/keyset-page.js';

const cursor = Type.Optional(Type.String({ maxLength: 200 }));

/** Query fields of a paged list. */
export const PageFields = { next: cursor, previous: cursor };

/** The page a link asks for; without one, the first. */
export function pageRequestOf(query: { next?: string; previous?: string }, limit: number): PageRequest {
  if (query.previous) return { direction: 'previous', cursor: query.previous, limit };
  return { direction: 'next', cursor: query.next || null, limit };
}
