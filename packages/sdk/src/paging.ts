/**
 * The service's lists page by `limit` and `offset` (`meta.limit`, `meta.offset`, and `meta.total`
 * where the list counts). A list call is both: awaited, it is one page; iterated with
 * `for await`, it is every item of every page from that offset on, fetched a page at a time.
 *
 * Offsets shift when records are added or removed while you page: for a complete pass over
 * vehicles that change, page by `updated_since` instead (docs/api.md "Paging").
 */
import type { Envelope, Meta } from './transport.js';

export interface Page<T> {
  data: T[];
  meta: Meta;
}

/** One page when awaited; every item from there on when iterated. */
export type PageCall<T> = Promise<Page<T>> & AsyncIterable<T>;

/**
 * `fetchPage(offset)` fetches the page at `offset` (undefined: the caller's own, for the first).
 * The first page is requested at once and shared by `await` and the iteration.
 */
export function pageCall<T>(fetchPage: (offset: number | undefined) => Promise<Envelope<T[]>>): PageCall<T> {
  const first = fetchPage(undefined).then(({ data, meta }): Page<T> => ({ data, meta }));
  async function* items(): AsyncGenerator<T> {
    let page = await first;
    for (;;) {
      yield* page.data;
      const offset = (page.meta.offset ?? 0) + page.data.length;
      const full = page.meta.limit !== null && page.data.length >= page.meta.limit;
      const more = page.meta.total === null ? full : offset < page.meta.total;
      if (!more || page.data.length === 0) return;
      page = await fetchPage(offset);
    }
  }
  return Object.assign(first, { [Symbol.asyncIterator]: items });
}
