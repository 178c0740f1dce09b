import { describe, expect, it } from 'vitest';
import { cursorClaims } from '../../../src/webhooks/deliver-core.js';

/** Pending rows by creation time; a claim takes the oldest at or after `from`. */
function fakeLane(createdAt: string[]) {
  const pending = new Set(createdAt);
  const calls: Array<string | null> = [];
  const claim = async (count: number, from: string | null) => {
    calls.push(from);
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
    expect(lane.calls).toEqual([null, '02']);
  });

  it('claims once more from the start before answering none, so a late row behind the cursor is taken', async () => {
    const lane = fakeLane(['01', '02']);
    const take = cursorClaims(lane.claim);
    await take(2);
    lane.pending.add('00'); // committed late, created before the cursor
    expect((await take(2)).map((r) => r.createdAt)).toEqual(['00']);
    expect(lane.calls).toEqual([null, '02', null]);
    expect(await take(2)).toEqual([]);
  });

  it('keeps its cursor across an empty answer', async () => {
    const lane = fakeLane([]);
    const take = cursorClaims(lane.claim);
    expect(await take(5)).toEqual([]);
    expect(lane.calls).toEqual([null]);
  });
});
