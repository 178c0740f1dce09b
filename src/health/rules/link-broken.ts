/**
 * The tracker link and the trusted odometer (`link_broken`: docs/health.md, and its "Sources").
 * Not an alert rule: the engine runs it first, stores `LinkState` on the vehicle, writes
 * `linkBroken` to the read model and hands `odometer` and `averageDailyKm` to the rules after it.
 *
 * - trusted odometer: the latest reading we believe. A manual (or service) entry is an anchor and
 *   is trusted at once; a provider reading is trusted only when it agrees with the trusted one.
 * - candidate: a provider reading that contradicts the trusted odometer (backwards, or faster
 *   than any vehicle drives). It never becomes the trusted odometer (Fleetio never makes a voided
 *   meter entry current), so one bad reading cannot move maintenance due dates.
 * - conflict: `confirmReadings` consecutive candidates, or one far-backwards reading.
 *
 * State is JSON (ISO strings) and bounded: two counters, three small records, at most 31 days.
 */
import { isoTimestamp } from '../../domain/iso-time.js';
import { isOdometerSignal, manualSources, maxFutureSkewMs } from '../../domain/sample.js';
import { msPerDay } from '../../domain/units.js';
import type { LinkState } from '../../domain/health.js';
import type { LinkBroken } from '../../domain/vehicle.js';
import type { HealthConfig } from '../../domain/health-config.js';
import { daysBetween, isoDate, startOfIsoDate } from '../dates.js';
import type { RuleSample } from '../../domain/sample.js';
import { earliestAfter } from '../recheck.js';
import { nonNegativeValue } from '../sample-values.js';

export interface LinkEvaluation {
  state: LinkState;
  linkBroken: LinkBroken | null;
  odometer: { km: number; at: Date; source: string } | null;
  /**
   * The earliest time after `now` (epoch ms) at which the link or the 30-day average changes
   * without new samples: the tracker going stale, the oldest day leaving the window. Null: never.
   */
  recheckAtMs: number | null;
}

/** The shortest gap the rate check divides by, so two readings a minute apart cannot look impossible. */
const minRateGapDays = 1 / 24;
const dailyWindowDays = 30;

export function initialLinkState(): LinkState {
  return {
    trusted: null,
    lastTracker: null,
    candidates: 0,
    conflict: null,
    consistentInConflict: 0,
    daily: [],
    first: null,
  };
}

function odometerKm(sample: RuleSample): number | null {
  if (!isOdometerSignal(sample.signal)) return null;
  return nonNegativeValue(sample.value);
}

/** The first day kept in `daily`: today and the 30 days before it. */
function firstKeptDay(now: Date): string {
  return isoDate(new Date(now.getTime() - dailyWindowDays * msPerDay));
}

function withDaily(daily: LinkState['daily'], trusted: NonNullable<LinkState['trusted']>): LinkState['daily'] {
  const day = trusted.at.slice(0, 10);
  const last = daily[daily.length - 1];
  // The trusted odometer only moves forward in time, so the day is the last entry or a new one.
  if (last && last.day === day) return [...daily.slice(0, -1), { day, km: trusted.km }];
  return [...daily, { day, km: trusted.km }];
}

function trust(state: LinkState, km: number, at: Date, source: string): LinkState {
  const trusted = { km, at: isoTimestamp(at), source };
  return { ...state, trusted, daily: withDaily(state.daily, trusted), first: state.first ?? { km, at: trusted.at } };
}

function applyAnchor(state: LinkState, km: number, at: Date, source: string): LinkState {
  // An anchor below the trusted odometer corrects it: the days recorded before were on a wrong
  // baseline, and averaging across the correction would give a negative or wrong distance.
  const rebased = state.trusted !== null && km < state.trusted.km;
  const base = rebased ? { ...state, daily: [], first: null } : state;
  return { ...trust(base, km, at, source), candidates: 0, conflict: null, consistentInConflict: 0 };
}

function applyTracker(state: LinkState, km: number, at: Date, source: string, config: HealthConfig): LinkState {
  const link = config.link;
  const anchor = state.trusted;
  if (!anchor) return trust(state, km, at, source);

  const anchorAt = new Date(anchor.at);
  const backwardsKm = anchor.km - km;
  // Meters never roll back; the tolerance absorbs rounding between providers.
  const backwards = backwardsKm > link.backwardsToleranceKm;
  const rateKmPerDay = (km - anchor.km) / Math.max(daysBetween(anchorAt, at), minRateGapDays);
  const impossibleRate = rateKmPerDay > link.maxDailyKm;

  if (!backwards && !impossibleRate) {
    const next = { ...trust(state, km, at, source), candidates: 0 };
    if (!state.conflict) return { ...next, consistentInConflict: 0 };
    const consistent = Math.min(state.consistentInConflict + 1, link.confirmReadings);
    return consistent >= link.confirmReadings
      ? { ...next, conflict: null, consistentInConflict: 0 }
      : { ...next, consistentInConflict: consistent };
  }

  const candidates = Math.min(state.candidates + 1, link.confirmReadings);
  const confirmed = candidates >= link.confirmReadings || backwardsKm > link.immediateConflictKm;
  let conflict = state.conflict;
  if (conflict) conflict = { ...conflict, trackerKm: km };
  else if (confirmed) conflict = { since: anchor.at, trackerKm: km };
  return { ...state, candidates, conflict, consistentInConflict: 0 };
}

function linkBrokenOf(
  state: LinkState,
  telematicsProvider: string | null,
  config: HealthConfig,
  now: Date,
): LinkBroken | null {
  // A manually tracked vehicle has no link to break.
  if (telematicsProvider === null) return null;
  if (!state.lastTracker) return { reason: 'no_reading', since: null, tracker_km: null };
  if (state.conflict) return { reason: 'conflict', since: state.conflict.since, tracker_km: state.conflict.trackerKm };
  if (daysBetween(new Date(state.lastTracker.at), now) > config.link.staleDays) {
    return { reason: 'stale', since: state.lastTracker.at, tracker_km: null };
  }
  return null;
}

/**
 * Feeds new samples (oldest first) through the link state. Samples that are not odometer readings
 * are ignored, as are readings dated more than a day after `now` and readings older than the
 * trusted odometer (a late reading must not move the trusted odometer back).
 */
export function evaluateLink(
  prev: LinkState,
  samples: readonly RuleSample[],
  telematicsProvider: string | null,
  config: HealthConfig,
  now: Date,
): LinkEvaluation {
  let state = prev;
  for (const sample of samples) {
    const km = odometerKm(sample);
    if (km === null) continue;
    const at = sample.recordedAt;
    if (at.getTime() > now.getTime() + maxFutureSkewMs) continue;
    // Hand-entered readings: someone looked at the dashboard, so they re-baseline everything.
    const anchor = manualSources.has(sample.source);
    if (!anchor) {
      // Any provider reading proves the tracker reports (no_reading, stale), even a late one.
      const last = state.lastTracker;
      if (!last || at.getTime() >= Date.parse(last.at)) state = { ...state, lastTracker: { km, at: isoTimestamp(at) } };
    }
    if (state.trusted && at.getTime() < Date.parse(state.trusted.at)) continue;
    state = anchor ? applyAnchor(state, km, at, sample.source) : applyTracker(state, km, at, sample.source, config);
  }
  const keepFrom = firstKeptDay(now);
  if (state.daily.some((entry) => entry.day < keepFrom)) {
    state = { ...state, daily: state.daily.filter((entry) => entry.day >= keepFrom) };
  }
  const trusted = state.trusted;
  const linkBroken = linkBrokenOf(state, telematicsProvider, config, now);
  return {
    state,
    linkBroken,
    odometer: trusted ? { km: trusted.km, at: new Date(trusted.at), source: trusted.source } : null,
    recheckAtMs: earliestAfter(now.getTime(), [
      linkBroken === null ? staleAtMs(state, telematicsProvider, config) : null,
      state.daily.length > 0 ? startOfIsoDate(state.daily[0]!.day).getTime() + (dailyWindowDays + 1) * msPerDay : null,
    ]),
  };
}

/** The first millisecond at which a reporting tracker counts as stale (more than `staleDays` without a reading). */
function staleAtMs(state: LinkState, telematicsProvider: string | null, config: HealthConfig): number | null {
  if (telematicsProvider === null || !state.lastTracker || state.conflict) return null;
  return Math.floor(Date.parse(state.lastTracker.at) + config.link.staleDays * msPerDay) + 1;
}

/**
 * Average distance per day over the last 30 days: the trusted distance between the oldest and the
 * newest day kept, over the days between them. Null with fewer than two days (nothing to compare).
 * A small negative distance (tracker jitter within the backwards tolerance) counts as zero.
 */
export function averageDailyKm(state: LinkState, now: Date): number | null {
  const keepFrom = firstKeptDay(now);
  const days = state.daily.filter((entry) => entry.day >= keepFrom);
  const oldest = days[0];
  const newest = days[days.length - 1];
  if (!oldest || !newest || days.length < 2) return null;
  const spanDays = daysBetween(startOfIsoDate(oldest.day), startOfIsoDate(newest.day));
  if (spanDays <= 0) return null;
  return Math.max(0, newest.km - oldest.km) / spanDays;
}
