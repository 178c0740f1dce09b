/**
 * Whether a per-minute series of a soak run trends upward, decided by a least-squares line rather
 * than by eye. A series trends upward when both hold:
 * - the slope is significantly above zero: its t statistic (slope over its standard error) passes
 *   the one-sided 95 % critical value of Student's t with n − 2 degrees of freedom, so noise
 *   around a flat level is not called a trend;
 * - the rise the line makes over the run (slope × (n − 1)) is at least `relativeRise` of the
 *   series' mean and at least `minRise` in the series' own unit, so a real but negligible drift
 *   (a few MiB of a 300 MiB process) is not called one either.
 * Fewer than three points cannot separate a slope from noise: the verdict is then `too few points`.
 * Used by the soak bench (bench/soak.ts); it sits with the test helpers so that its unit test may
 * import it: benches may import test helpers, tests never import benches (docs/architecture.md).
 */

export interface TrendThresholds {
  /** Smallest rise over the run, as a share of the series' mean, that counts (0.1: 10 %). */
  relativeRise: number;
  /** Smallest rise over the run in the series' unit that counts (e.g. 5 ms, 10 MiB, 50 jobs). */
  minRise: number;
}

export interface Trend {
  /** Least-squares slope per step (per minute for a soak series). */
  slope: number;
  /** slope × (n − 1): what the fitted line rises from the first point to the last. */
  rise: number;
  /** slope / standard error of the slope; Infinity for a rising series that lies exactly on its line. */
  t: number;
  verdict: 'upward' | 'flat or falling' | 'too few points';
}

/** One-sided 95 % critical values of Student's t for 1…30 degrees of freedom; 1.645 beyond (the normal). */
const tCritical95 = [
  6.314, 2.92, 2.353, 2.132, 2.015, 1.943, 1.895, 1.86, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.74,
  1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697,
];

export function tCriticalOneSided95(degreesOfFreedom: number): number {
  return tCritical95[degreesOfFreedom - 1] ?? 1.645;
}

export function fitTrend(series: readonly number[], thresholds: TrendThresholds): Trend {
  const n = series.length;
  if (n < 3) return { slope: 0, rise: 0, t: 0, verdict: 'too few points' };
  const meanX = (n - 1) / 2;
  const meanY = series.reduce((sum, y) => sum + y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  series.forEach((y, x) => {
    sxx += (x - meanX) ** 2;
    sxy += (x - meanX) * (y - meanY);
  });
  const slope = sxy / sxx;
  const residualSquares = series.reduce((sum, y, x) => sum + (y - (meanY + slope * (x - meanX))) ** 2, 0);
  const standardError = Math.sqrt(residualSquares / (n - 2) / sxx);
  const t = standardError > 0 ? slope / standardError : slope > 0 ? Infinity : slope < 0 ? -Infinity : 0;
  const rise = slope * (n - 1);
  const upward =
    t > tCriticalOneSided95(n - 2) && rise >= thresholds.minRise && rise >= thresholds.relativeRise * Math.abs(meanY);
  return { slope, rise, t, verdict: upward ? 'upward' : 'flat or falling' };
}
