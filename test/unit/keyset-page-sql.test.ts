import { describe, expect, it } from 'vitest';
import { keysetPageSql } from '../../src/db/keyset-page-sql.js';

describe('keyset page statement', () => {
  const sql = keysetPageSql(
    {
      table: 't',
      matching: 'company_id = $1',
      time: 'created_at',
      id: 'id',
      idType: 'uuid',
      firstParam: 2,
    },
    'id',
  ).replace(/\s+/g, ' ');

  it('reads down from the cursor for next, up for previous, and gives the page newest first', () => {
    expect(sql).toContain(
      `WHERE $2 = 'next' AND company_id = $1 AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid)) ORDER BY created_at DESC, id DESC LIMIT $5`,
    );
    expect(sql).toContain(
      `WHERE $2 = 'previous' AND company_id = $1 AND (created_at, id) > ($3::timestamptz, $4::uuid) ORDER BY created_at, id LIMIT $5`,
    );
    expect(sql).toMatch(
      /^SELECT id FROM \(\(SELECT \* FROM t .* UNION ALL .*\)\) page ORDER BY created_at DESC, id DESC$/,
    );
  });
});
