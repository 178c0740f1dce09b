import { describe, expect, it } from 'vitest';
import { cursorClaims } from '../../../src/webhooks/deliver-core.js';

/** Pending rows by creation time; a claim takes the oldest at or after `from`. */
function fakeLane(createdAt: string[]) {
  const pending = new Set(createdAt);
  const calls: Array<[number, string | null]> = [];
  const claim = async (count: number, from: string | null) => {
    calls.push([count, from]);
    const rows = [...pending]
      .filter((at) => from === null || at >= from)
      .sort()
      .slice(0, count)
      .map((at) => ({ createdAt: at }));
    for (const row of rows) pending.delete(row.createdAt);
    return rows;
  };
  return { pending, calls, claim };
}

describe('cursorClaims', () => {
  it('starts each claim where the previous one ended', async () => {
    const lane = fakeLane(['01', '02', '03', '04', '05']);
    const take = cursorClaims(lane.claim);
    expect((await take(2)).map((r) => r.createdAt)).toEqual(['01', '02']);
    expect((await take(2)).map((r) => r.createdAt)).toEqual(['03', '04']);
    expect(lane.calls).toEqual([
      [2, null],
      [2, '02'],
    ]);
  });

  it('fills a short answer from the start, so a late row behind the cursor is taken and the cursor stays at the newest', async () => {
    const lane = fakeLane(['01', '02', '03']);
    const take = cursorClaims(lane.claim);
    await take(2);
    lane.pending.add('00'); // committed late, created before the cursor
    expect((await take(3)).map((r) => r.createdAt)).toEqual(['03', '00']);
    expect(lane.calls).toEqual([
      [2, null],
      [3, '02'],
      [2, null],
    ]);
    lane.pending.add('04');
    expect((await take(1)).map((r) => r.createdAt)).toEqual(['04']);
    expect(lane.calls.at(-1)).toEqual([1, '03']);
  });

  it('answers none only when the lane is empty from the start too', async () => {
    const lane = fakeLane(['01']);
    const take = cursorClaims(lane.claim);
    await take(1);
    expect(await take(5)).toEqual([]);
    expect(lane.calls).toEqual([
      [1, null],
      [5, '01'],
      [5, null],
    ]);
  });
});
