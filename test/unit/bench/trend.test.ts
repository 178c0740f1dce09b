import { describe, expect, it } from 'vitest';
import { fitTrend, tCriticalOneSided95 } from '../../helpers/trend.js';

const thresholds = { relativeRise: 0.1, minRise: 5 };

describe('fitTrend', () => {
  it('finds the least-squares slope and the rise it makes over the run', () => {
    const trend = fitTrend([100, 110, 120, 130, 140], thresholds);
    expect(trend.slope).toBeCloseTo(10);
    expect(trend.rise).toBeCloseTo(40);
    expect(trend.t).toBe(Infinity);
    expect(trend.verdict).toBe('upward');
  });

  it('calls a noisy but rising series upward when the slope is significant and the rise large enough', () => {
    const trend = fitTrend([200, 230, 215, 250, 240, 270, 262, 290, 280, 305], thresholds);
    expect(trend.t).toBeGreaterThan(tCriticalOneSided95(8));
    expect(trend.verdict).toBe('upward');
  });

  it('does not call noise around a flat level a trend', () => {
    const trend = fitTrend([300, 320, 290, 310, 305, 295, 318, 300, 290, 312], thresholds);
    expect(trend.verdict).toBe('flat or falling');
  });

  it('does not call a significant but negligible drift a trend', () => {
    // One MiB a minute on 300 MiB: 9 MiB over ten minutes, 3 % of the mean.
    const series = Array.from({ length: 10 }, (_, i) => 300 + i);
    expect(fitTrend(series, { relativeRise: 0.1, minRise: 10 }).verdict).toBe('flat or falling');
  });

  it('does not call a rise smaller than the absolute floor a trend, even from a mean near zero', () => {
    expect(fitTrend([0, 0, 1, 1, 2, 2], thresholds).verdict).toBe('flat or falling');
    expect(fitTrend([0, 0, 10, 20, 30, 40], thresholds).verdict).toBe('upward');
  });

  it('does not call a falling or constant series upward', () => {
    expect(fitTrend([50, 40, 30, 20], thresholds).verdict).toBe('flat or falling');
    expect(fitTrend([7, 7, 7, 7], thresholds)).toEqual({ slope: 0, rise: 0, t: 0, verdict: 'flat or falling' });
  });

  it('needs three points to fit', () => {
    expect(fitTrend([1, 100], thresholds).verdict).toBe('too few points');
    expect(fitTrend([], thresholds).verdict).toBe('too few points');
  });
});
