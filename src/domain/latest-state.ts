/**
 * The latest state's fold, as a pure function: a batch's newest sample of each vehicle and signal
 * against what the locked vehicle row holds, answered as one patch per vehicle whose state moves.
 * The rules are those of db/vehicle-state.ts `writeLatestState` (newer wins per signal, the
 * odometer series apart, nothing from before the current owner's span, `updated_at` only for a
 * changed value). Folded here rather than in SQL: the statement that judged each sample spent
 * three quarters of its time reading the samples and aggregating them per vehicle while it held
 * every row of the batch (docs/performance.md, "The latest state folded in Node").
 */
import { isoTimestamp } from './iso-time.js';
import { isOdometerSignal, manualSources, type LatestSample } from './sample.js';
import { equalsAsStored } from './stored-json.js';

/** What the fold reads of a locked vehicle row. */
export interface StoredLatestState {
  /** The row's `signals`: each signal's latest value, its time under `observed_at`. */
  signals: Record<string, unknown>;
  /** The odometer series' latest values (they never become `signals` themselves). */
  odometerValues: Record<string, unknown>;
  /**
   * When the current owner's span began (a previous owner's span ended), in whole milliseconds
   * rounded up, or null for the first owner: a sample before it is history, never state.
   */
  ownedSinceMs: number | null;
}

/** One vehicle's write: the `signals` keys that change, merged into the row by the statement. */
export interface LatestStatePatch {
  vehicleId: string;
  /** Winning values (objects with their own `as_of`), and `odometer` when a manual reading sets it. */
  signals: Record<string, unknown>;
  /** Each winning signal's time, merged into `signals.observed_at`. */
  observedAt: Record<string, string>;
  odometerValues: Record<string, unknown>;
  /** The batch's newest sample of the vehicle, winning or not: `as_of` advances to it. */
  newestAt: string;
  /** The batch's newest provider odometer (not typed by a person): `ecu_odometer_at` advances to it. */
  ecuOdometerAt: string | null;
  /** A winning value differs from the stored one (an object compared without its `as_of`): `updated_at` moves. */
  valueChanged: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function withoutAsOf(value: Record<string, unknown>): Record<string, unknown> {
  const { as_of: _asOf, ...rest } = value;
  return rest;
}

/**
 * Whether a sample at `atMs` (whole milliseconds, as every ingested time is) is newer than a stored
 * time. `Date.parse` drops digits past the millisecond, which keeps the comparison exact: a whole
 * millisecond after the truncated time is after the precise one too.
 */
const newerThan = (atMs: number, stored: unknown): boolean => typeof stored !== 'string' || atMs > Date.parse(stored);

interface Fold {
  patch: LatestStatePatch;
  row: StoredLatestState;
  newestMs: number;
  ecuOdometerMs: number;
  manualOdometerMs: number;
  won: boolean;
}

/** The patch of each vehicle of `latest` whose state moves. A vehicle missing from `stored` (deleted meanwhile) is skipped. */
export function foldLatestState(
  latest: readonly LatestSample[],
  stored: ReadonlyMap<string, StoredLatestState>,
): LatestStatePatch[] {
  const folds = new Map<string, Fold>();
  for (const sample of latest) {
    let fold = folds.get(sample.vehicleId);
    if (!fold) {
      const row = stored.get(sample.vehicleId);
      if (!row) continue;
      const patch: LatestStatePatch = {
        vehicleId: sample.vehicleId,
        signals: {},
        observedAt: {},
        odometerValues: {},
        newestAt: '',
        ecuOdometerAt: null,
        valueChanged: false,
      };
      fold = { patch, row, newestMs: -Infinity, ecuOdometerMs: -Infinity, manualOdometerMs: -Infinity, won: false };
      folds.set(sample.vehicleId, fold);
    }
    foldSample(fold, sample);
  }
  const patches: LatestStatePatch[] = [];
  for (const fold of folds.values()) {
    if (!fold.won) continue;
    fold.patch.newestAt = isoTimestamp(new Date(fold.newestMs));
    if (fold.ecuOdometerMs > -Infinity) fold.patch.ecuOdometerAt = isoTimestamp(new Date(fold.ecuOdometerMs));
    patches.push(fold.patch);
  }
  return patches;
}

function foldSample(fold: Fold, sample: LatestSample): void {
  const { row, patch } = fold;
  const atMs = sample.recordedAt.getTime();
  const odometer = isOdometerSignal(sample.signal);
  fold.newestMs = Math.max(fold.newestMs, atMs);
  if (sample.signal === 'odometer_km' && !manualSources.has(sample.source))
    fold.ecuOdometerMs = Math.max(fold.ecuOdometerMs, atMs);

  const observed = isObject(row.signals.observed_at) ? row.signals.observed_at[sample.signal] : undefined;
  const owned = odometer || row.ownedSinceMs === null || atMs >= row.ownedSinceMs;
  if (!owned || !newerThan(atMs, observed)) return;
  fold.won = true;
  const at = isoTimestamp(sample.recordedAt);
  patch.observedAt[sample.signal] = at;
  const value = sample.value;
  if (odometer) {
    patch.odometerValues[sample.signal] = value;
    patch.valueChanged ||= !sameValue(value, row.odometerValues[sample.signal]);
    // A manual reading becomes the odometer: the newest one, unless the stored odometer is newer still.
    if (sample.source === 'manual' && atMs > fold.manualOdometerMs) {
      const storedOdometer = row.signals.odometer;
      const storedAsOf = isObject(storedOdometer) ? storedOdometer.as_of : null;
      if (storedOdometer === undefined || (typeof storedAsOf === 'string' && storedAsOf <= at)) {
        patch.signals.odometer = { km: value, as_of: at, source: sample.source };
        fold.manualOdometerMs = atMs;
      }
    }
    return;
  }
  const storedValue = row.signals[sample.signal];
  if (isObject(value)) {
    patch.signals[sample.signal] = { ...value, as_of: at };
    patch.valueChanged ||= !sameValue(
      withoutAsOf(value),
      isObject(storedValue) ? withoutAsOf(storedValue) : storedValue,
    );
  } else {
    patch.signals[sample.signal] = value;
    patch.valueChanged ||= !sameValue(value, storedValue);
  }
}

/** A value equals the stored one (a missing key never does). */
const sameValue = (value: unknown, stored: unknown): boolean => stored !== undefined && equalsAsStored(value, stored);
