/**
 * Odometer integrity (docs/history-report.md): pure rules over the odometer points of
 * a VIN, each flag explained in words with the readings that fired it.
 *
 * Terminology:
 * - point: one odometer reading (signal, source, time, km): the first and last reading of each
 *   daily checkpoint, plus every reading of a day whose checkpoint shows a drop inside it.
 * - stream: the points of one signal and source (the ECU odometer from one provider, the manual
 *   entries, a GPS-derived odometer), in time order.
 *
 * Rules (limits shared with the tracker-link rule, src/domain/health-config.ts; docs/history-report.md):
 * - backwards: within a stream, a reading lower than the one before by more than the tolerance.
 * - impossible_rate: within a stream, a rise faster than a vehicle can drive (3,000 mi/day; gaps
 *   under an hour count as an hour, so two readings seconds apart cannot look impossible).
 * - source_conflict: two streams that disagree, at readings no more than an hour apart, by more
 *   than 250 miles and 5 % of the reading (the 5 % dashboard vs OBD gap treated as a fraud sign,
 *   cardr.com; the 250 miles our rollback tolerance). One flag per pair of streams.
 */
import { defaultHealthConfig } from '../domain/health-config.js';
import { manualSources } from '../domain/sample.js';
import { kmToMiles, msPerDay } from '../domain/units.js';
import type { IntegrityFlag, OdometerIntegrity, OdometerReading } from './types.js';

export interface OdometerPoint {
  signal: string;
  source: string;
  at: Date;
  km: number;
}

export const integrityLimits = {
  backwardsToleranceKm: defaultHealthConfig.link.backwardsToleranceKm,
  maxDailyKm: defaultHealthConfig.link.maxDailyKm,
  minRateGapMs: 3_600_000,
  conflictWindowMs: 3_600_000,
  conflictMinMiles: 250,
  conflictRatio: 0.05,
} as const;

export function streamKey(point: { signal: string; source: string }): string {
  return `${point.signal}\u0000${point.source}`;
}

/** "the samsara odometer", "the GPS-derived samsara odometer", "the manually entered odometer". */
export function streamLabel(point: { signal: string; source: string }): string {
  if (manualSources.has(point.source)) return 'the manually entered odometer';
  return point.signal === 'gps_odometer_km'
    ? `the GPS-derived ${point.source} odometer`
    : `the ${point.source} odometer`;
}

export function toReading(point: OdometerPoint): OdometerReading {
  return { at: point.at.toISOString(), miles: roundMiles(kmToMiles(point.km)), source: point.source };
}

export function roundMiles(miles: number): number {
  return Math.round(miles * 10) / 10;
}

const miles = (km: number) => Math.round(kmToMiles(km)).toLocaleString('en-US');
const when = (at: Date) => at.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

function duration(ms: number): string {
  const hours = ms / 3_600_000;
  if (hours < 48) return `${Math.max(1, Math.round(hours))} hour${Math.round(hours) === 1 ? '' : 's'}`;
  return `${Math.round(hours / 24)} days`;
}

/** Points grouped by stream, each stream in time order. */
export function streams(points: readonly OdometerPoint[]): OdometerPoint[][] {
  const byKey = new Map<string, OdometerPoint[]>();
  for (const point of points) {
    const stream = byKey.get(streamKey(point)) ?? [];
    stream.push(point);
    byKey.set(streamKey(point), stream);
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, stream]) => stream.sort((a, b) => a.at.getTime() - b.at.getTime()));
}

function backwardsFlags(stream: readonly OdometerPoint[]): IntegrityFlag[] {
  const flags: IntegrityFlag[] = [];
  for (let i = 1; i < stream.length; i++) {
    const before = stream[i - 1]!;
    const after = stream[i]!;
    const dropKm = before.km - after.km;
    if (dropKm <= integrityLimits.backwardsToleranceKm) continue;
    flags.push({
      rule: 'backwards',
      explanation:
        `${capitalize(streamLabel(after))} read ${miles(before.km)} mi at ${when(before.at)} and ${miles(after.km)} mi ` +
        `at ${when(after.at)}: ${miles(dropKm)} miles lower. An odometer never runs backwards, so one reading is ` +
        `wrong or the odometer was altered.`,
      readings: [toReading(before), toReading(after)],
    });
  }
  return flags;
}

function rateFlags(stream: readonly OdometerPoint[]): IntegrityFlag[] {
  const flags: IntegrityFlag[] = [];
  for (let i = 1; i < stream.length; i++) {
    const before = stream[i - 1]!;
    const after = stream[i]!;
    const riseKm = after.km - before.km;
    const gapMs = after.at.getTime() - before.at.getTime();
    const perDayKm = (riseKm / Math.max(gapMs, integrityLimits.minRateGapMs)) * msPerDay;
    if (perDayKm <= integrityLimits.maxDailyKm) continue;
    flags.push({
      rule: 'impossible_rate',
      explanation:
        `${capitalize(streamLabel(after))} rose ${miles(riseKm)} miles in ${duration(gapMs)} ` +
        `(${when(before.at)} to ${when(after.at)}), ${miles(perDayKm)} miles a day; no vehicle drives more than ` +
        `${miles(integrityLimits.maxDailyKm)} miles a day.`,
      readings: [toReading(before), toReading(after)],
    });
  }
  return flags;
}

function conflicts(a: OdometerPoint, b: OdometerPoint): boolean {
  const diffMiles = Math.abs(kmToMiles(a.km - b.km));
  return (
    diffMiles > integrityLimits.conflictMinMiles &&
    diffMiles > integrityLimits.conflictRatio * kmToMiles(Math.max(a.km, b.km))
  );
}

function conflictFlag(first: readonly OdometerPoint[], second: readonly OdometerPoint[]): IntegrityFlag | null {
  const pairs: Array<[OdometerPoint, OdometerPoint]> = [];
  let j = 0;
  for (const a of first) {
    // Advance to the point of `second` nearest in time to a (both streams are in time order).
    while (
      j + 1 < second.length &&
      Math.abs(second[j + 1]!.at.getTime() - a.at.getTime()) <= Math.abs(second[j]!.at.getTime() - a.at.getTime())
    ) {
      j++;
    }
    const b = second[j];
    if (!b || Math.abs(b.at.getTime() - a.at.getTime()) > integrityLimits.conflictWindowMs) continue;
    if (conflicts(a, b)) pairs.push([a, b]);
  }
  if (pairs.length === 0) return null;
  const [a, b] = pairs[0]!;
  const others = pairs.length - 1;
  return {
    rule: 'source_conflict',
    explanation:
      `${capitalize(streamLabel(a))} read ${miles(a.km)} mi at ${when(a.at)} while ${streamLabel(b)} read ` +
      `${miles(b.km)} mi at ${when(b.at)}: ${miles(Math.abs(a.km - b.km))} miles apart` +
      (others > 0 ? `, and they disagree the same way at ${others} more reading${others === 1 ? '' : 's'}` : '') +
      `. At most one of them shows the true distance.`,
    readings: [toReading(a), toReading(b)],
  };
}

export function checkOdometerIntegrity(points: readonly OdometerPoint[]): OdometerIntegrity {
  if (points.length < 2) return { status: 'insufficient_data', flags: [] };
  const all = streams(points);
  const flags: IntegrityFlag[] = [];
  for (const stream of all) flags.push(...backwardsFlags(stream), ...rateFlags(stream));
  for (let i = 0; i < all.length; i++) {
    for (let k = i + 1; k < all.length; k++) {
      const flag = conflictFlag(all[i]!, all[k]!);
      if (flag) flags.push(flag);
    }
  }
  flags.sort((x, y) => (x.readings[0]!.at < y.readings[0]!.at ? -1 : x.readings[0]!.at > y.readings[0]!.at ? 1 : 0));
  return { status: flags.length > 0 ? 'flagged' : 'consistent', flags };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
