/**
 * The statement text of a keyset page (src/domain/keyset-page.ts) over rows ordered by (time, id),
 * newest first: the rows next to the cursor row, older ones for 'next', newer ones for 'previous'
 * (the newest when the cursor is null). It is a union of one branch per direction: each direction
 * test is a one-time filter, so only one branch runs, each a range scan of an index on
 * (…, time DESC, id DESC) that the matching predicate's equalities lead into. 'previous' reads
 * upwards and the whole page comes back newest first.
 */

export interface KeysetPageSpec {
  table: string;
  /** The caller's predicate on `table`'s columns, with its own placeholders. */
  matching: string;
  /** The time the list is ordered by, as its index has it (a column, or the indexed expression). */
  time: string;
  id: string;
  /** The type the cursor's id is cast to, the id column's. */
  idType: 'uuid' | 'bigint';
  /**
   * The first of four consecutive placeholders after the predicate's: the direction ('next' or
   * 'previous'), the cursor's time and id (both null for the top), and the limit.
   */
  firstParam: number;
}

/** The page's rows of `table` (all its columns) as a parenthesised union, not yet in page order. */
export function keysetPageRows(spec: KeysetPageSpec): string {
  const { table, matching, time, id, idType, firstParam: n } = spec;
  const [direction, cursorTime, cursorId, limit] = [n, n + 1, n + 2, n + 3].map((p) => `$${p}`);
  const cursor = `(${cursorTime}::timestamptz, ${cursorId}::${idType})`;
  return `((SELECT * FROM ${table}
           WHERE ${direction} = 'next' AND ${matching}
             AND (${cursorTime}::timestamptz IS NULL OR (${time}, ${id}) < ${cursor})
           ORDER BY ${time} DESC, ${id} DESC LIMIT ${limit})
          UNION ALL
          (SELECT * FROM ${table}
           WHERE ${direction} = 'previous' AND ${matching} AND (${time}, ${id}) > ${cursor}
           ORDER BY ${time}, ${id} LIMIT ${limit}))`;
}

/** The whole statement: `select` (a select list over the table's columns) of the page, newest first. */
export function keysetPageSql(spec: KeysetPageSpec, select: string): string {
  return `SELECT ${select} FROM ${keysetPageRows(spec)} page ORDER BY ${spec.time} DESC, ${spec.id} DESC`;
}
