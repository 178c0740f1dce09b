import { describe, expect, it } from 'vitest';
import { monitoredSweepPageSize, sweepPagesOf } from '../../../src/evaluation/evaluate-vehicles.js';

describe('sweepPagesOf', () => {
  it('pages unmonitored vehicles by 500 and monitored ones by 50, each vehicle once, in listing order', () => {
    const due = Array.from({ length: 1_320 }, (_, i) => ({
      id: `v${String(i).padStart(4, '0')}`,
      monitored: i % 11 === 0,
    }));
    const pages = sweepPagesOf(due);
    expect(pages.map((page) => page.length)).toEqual([
      500,
      500,
      200,
      monitoredSweepPageSize,
      monitoredSweepPageSize,
      20,
    ]);
    expect(pages.flat().sort()).toEqual(due.map((v) => v.id));
    expect(pages.slice(3).flat()).toEqual(due.filter((v) => v.monitored).map((v) => v.id));
  });

  it('answers no page when nothing is due', () => {
    expect(sweepPagesOf([])).toEqual([]);
  });
});
