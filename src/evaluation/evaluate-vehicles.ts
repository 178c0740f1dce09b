/**
 * The evaluation stage for a set of vehicles, in the caller's transaction: the health rules
 * (src/health/) and then the monitoring detectors (src/monitoring/) over the same new samples,
 * composed here so that health never imports monitoring. Lock and load, run the pure engine per
 * vehicle, write health, link state, trusted odometer and health events, then run and store the
 * monitoring stage. Used for one vehicle after new samples (health.evaluate) and for pages of
 * vehicles by the sweep.
 *
 * New samples are those newer than a watermark kept per signal (`fed_through`): a sample that
 * commits after a newer sample of another signal (two ingest transactions, or a payload that
 * arrives late) is still newer than everything fed of its own signal, so it is evaluated. A
 * sample older than what was already fed of its own signal is history, as for the latest state.
 *
 * A refresh that asked for no cascade (docs/health.md "Updates, events and cascade") moves the vehicle state and
 * nothing downstream. Its readings and provider events are marked when stored (`without_cascade`,
 * migrations/0027), and every evaluation, whichever reads them first, feeds them to the link rule
 * (trusted odometer, link state) and never to the alert rules or the monitoring detectors; the
 * watermarks advance past them as past any sample read, so no later evaluation feeds them either.
 * The refresh's own evaluation (a job without cascade) runs the link rule alone when that is all
 * it finds; when it finds other new samples (a push stored them, its own evaluation with cascade
 * still queued behind or already passed), it evaluates them fully, exactly as that evaluation
 * would have: the two jobs are not ordered, so whichever runs first does what both owe.
 */
import {
  listVehiclesToSweep,
  loadHealthSubjects,
  lockHealthSubjects,
  lockUnchangedVehicles,
  loadLastServices,
  loadNewSamples,
  ruleSignals,
  saveHealth,
  unchangedHealthStates,
  lockVehiclesWithUnchangedInputs,
  type HealthSubject,
  type HealthWrite,
  type NewSample,
} from '../db/health.js';
import type { NewEventSample } from '../db/monitoring-delivery-queue.js';
import { whileHoldingLock } from '../db/advisory-locks.js';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.js';
import { isoTimestamp } from '../domain/iso-time.js';
import { isOdometerSignal } from '../domain/sample.js';
import { equalsAsStored } from '../domain/stored-json.js';
import { effectiveHealthConfig, type HealthConfig } from '../domain/health-config.js';
import { evaluateVehicleHealth, evaluateVehicleState, healthStateForNewOwner } from '../health/evaluate.js';
import { fullEvaluationShare, fullEvaluationSweeps } from '../health/recheck.js';
import { loadedHealthState, storedHealthState, storesAs } from '../health/stored-state.js';
import { loadVehiclePredictions } from '../history/build-report.js';
import { detectAndStore, type MonitoredVehicleEvaluation } from '../monitoring/detect-stage.js';
import { latestServiceAt } from '../monitoring/event-body.js';
import type { MonitoringKind } from '../domain/monitoring-kinds.js';
import type { RuleSample } from '../domain/sample.js';
import type { MonitoringLane } from '../queue/enqueue-monitoring.js';
import { detectorOnlySignals, loadMonitoring, monitoringSince, vehicleEventsWatermark } from './monitoring-feed.js';

export interface EvaluationOptions {
  /**
   * How the vehicles are locked:
   * - `first`: each before it is read, waiting for other writers (a transfer; the second try of
   *   `to-write`);
   * - `to-write` (one vehicle after new samples): read without locks and locked only to write,
   *   waiting for other writers, so an ingest batch that holds the vehicle meanwhile is not held
   *   up by the whole evaluation, nor the evaluation by the batch until it writes. When the
   *   vehicle's health inputs or its state row moved since the read (another evaluation, a
   *   transfer, an integrator's change), nothing is written and the summary says `moved`: the
   *   caller evaluates again with `first`. Ingest's own writes do not count as moved: it queues
   *   an evaluation of its own for them;
   * - `skip` (the sweep): read without locks; only those with something to write are locked,
   *   skipping any another transaction holds or wrote since the read (their own evaluation
   *   follows).
   */
  locking: 'first' | 'to-write' | 'skip';
  /**
   * False: owed to a refresh that asked to stop after the vehicle state. A vehicle whose new
   * samples and events all came without cascade gets the link rule alone (trusted odometer, link
   * state): no alert transitions, health events or monitoring detection; one with other new
   * samples or events is evaluated fully, as with cascade.
   */
  cascade: boolean;
}

export interface EvaluationSummary {
  evaluated: number;
  changed: string[];
  events: number;
  /** Monitoring: the subscriptions with new deliveries owed (their lanes are asked for after the commit). */
  monitoringLanes: MonitoringLane[];
  /** Monitoring: the kind of each event detected. */
  monitoringKinds: MonitoringKind[];
  /** `to-write` only: what was read moved before the write, and nothing was written. */
  moved: boolean;
}

const nothingEvaluated = (moved: boolean): EvaluationSummary => ({
  evaluated: 0,
  changed: [],
  events: 0,
  monitoringLanes: [],
  monitoringKinds: [],
  moved,
});

/**
 * At most this many new samples per signal and evaluation, the newest (a backlog is not replayed
 * into the rules): with the ten signals the rules read, at most 5,000 per vehicle.
 */
const maxSamplesPerSignal = 500;
const detectorSignals = detectorOnlySignals(ruleSignals);
const isRuleSignal = (signal: string) => (ruleSignals as readonly string[]).includes(signal);

/**
 * A vehicle's new samples and events, split: what the alert rules and the detectors read, and the
 * samples only the link rule reads (a refresh without cascade stored them).
 */
export function splitByCascade(samples: readonly NewSample[], events: readonly NewEventSample[]) {
  return {
    samples: samples.filter((sample) => !sample.withoutCascade),
    stateOnly: samples.filter((sample) => sample.withoutCascade),
    events: events.filter((event) => !event.withoutCascade),
  };
}

/**
 * Each signal's watermark moved to its newest sample fed; signals without new samples keep theirs.
 * Nothing fed (most vehicles in a sweep): the same object, so the caller compares by identity.
 */
export function advanceWatermarks(
  fed: readonly RuleSample[],
  fedThrough: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  if (fed.length === 0) return fedThrough;
  const newest = new Map<string, Date>();
  for (const sample of fed) {
    const at = newest.get(sample.signal);
    if (!at || sample.recordedAt.getTime() > at.getTime()) newest.set(sample.signal, sample.recordedAt);
  }
  const through = { ...fedThrough };
  for (const [signal, at] of newest) {
    const current = through[signal];
    if (!current || at.getTime() > Date.parse(current)) through[signal] = isoTimestamp(at);
  }
  return through;
}

export async function evaluateVehicles(
  tx: PoolClient,
  ids: readonly string[],
  now: Date,
  options: EvaluationOptions,
): Promise<EvaluationSummary> {
  const subjects =
    options.locking === 'first'
      ? await lockHealthSubjects(tx, ids)
      : await loadHealthSubjects(tx, ids, { inputsVersion: options.locking === 'to-write' });
  if (subjects.length === 0) return nothingEvaluated(false);
  // The monitoring stage rides on this evaluation: monitored vehicles also read the detectors' own signals and events.
  const { subscriptions: monitored, events: vehicleEvents } = await loadMonitoring(tx, subjects);
  // The rule signals' windows start at the stored watermarks (read in the statement); the detectors' at their own.
  const detectorWindows = subjects.flatMap((subject) => {
    const subscriptions = monitored.get(subject.id);
    if (!subscriptions) return [];
    return detectorSignals.map((signal) => ({
      vehicleId: subject.id,
      signal,
      since: monitoringSince(subscriptions, subject.fedThrough[signal]),
    }));
  });
  const samples = await loadNewSamples(
    tx,
    subjects.map((s) => s.id),
    detectorWindows,
    maxSamplesPerSignal,
  );
  const split = new Map(
    subjects.map((s) => [s.id, splitByCascade(samples.get(s.id) ?? [], vehicleEvents.get(s.id) ?? [])]),
  );
  // Without cascade, a vehicle whose new samples and events all came without it gets the link rule alone.
  const full = new Set(
    subjects
      .filter((s) => {
        const own = split.get(s.id)!;
        return options.cascade || own.samples.length > 0 || own.events.length > 0;
      })
      .map((s) => s.id),
  );
  // Only the alert rules and the detectors read the service history.
  const services = full.size > 0 ? await loadLastServices(tx, [...full]) : new Map();
  // Most vehicles follow their company's config: merge it once per company, not once per vehicle.
  const companyConfigs = new Map<string, HealthConfig>();
  const configOf = (subject: (typeof subjects)[number]): HealthConfig => {
    if (Object.keys(subject.vehicleConfig).length > 0)
      return effectiveHealthConfig(subject.companyConfig, subject.vehicleConfig);
    let config = companyConfigs.get(subject.companyId);
    if (!config) companyConfigs.set(subject.companyId, (config = effectiveHealthConfig(subject.companyConfig)));
    return config;
  };

  const monitoredEvaluations: MonitoredVehicleEvaluation[] = [];
  const evaluations: HealthWrite[] = subjects.map((subject) => {
    const fed = samples.get(subject.id) ?? [];
    const events = vehicleEvents.get(subject.id) ?? [];
    const newestEvent = events[events.length - 1];
    const advanced = advanceWatermarks(fed, subject.fedThrough);
    const fedThrough = newestEvent
      ? { ...advanced, [vehicleEventsWatermark]: isoTimestamp(newestEvent.recordedAt) }
      : advanced;
    const lastServices = services.get(subject.id) ?? {};
    const own = split.get(subject.id)!;
    const ruleSamples = (list: typeof fed) =>
      monitored.has(subject.id) ? list.filter((sample) => isRuleSignal(sample.signal)) : list;
    const previous = subject.state && loadedHealthState(subject.state);
    const result = full.has(subject.id)
      ? evaluateVehicleHealth(
          previous,
          ruleSamples(own.samples),
          {
            telematicsProvider: subject.telematicsProvider,
            createdAt: subject.createdAt,
            lastServices,
          },
          configOf(subject),
          now,
          subject.hasTelemetry,
          own.stateOnly,
        )
      : evaluateVehicleState(previous, fed, subject.telematicsProvider, configOf(subject), now);
    const subscriptions = full.has(subject.id) ? monitored.get(subject.id) : undefined;
    if (subscriptions) {
      monitoredEvaluations.push({
        vehicleId: subject.id,
        companyId: subject.companyId,
        subscriptions,
        samples: own.samples,
        events: own.events,
        health: {
          alerts: result.state.alerts,
          odometer: result.odometer ? { km: result.odometer.km, at: result.odometer.at } : null,
          linkBroken: result.linkBroken,
          lastServiceAt: latestServiceAt(lastServices),
        },
      });
    }
    const odometer = result.odometer
      ? { km: result.odometer.km, as_of: isoTimestamp(result.odometer.at), source: result.odometer.source }
      : null;
    // Compared as stored (jsonb reorders keys, a JSON round trip drops undefined fields), so an idle sweep writes nothing.
    const odometerChanged = odometer !== null && !equalsAsStored(odometer, subject.odometer);
    const visibleChange =
      odometerChanged ||
      !equalsAsStored(result.health, subject.health) ||
      !equalsAsStored(result.linkBroken, subject.linkBroken);
    const stateChanged =
      (fedThrough !== subject.fedThrough && !equalsAsStored(fedThrough, subject.fedThrough)) ||
      result.recheckAtMs !== (subject.recheckAt?.getTime() ?? null) ||
      !previous ||
      !subject.state ||
      !storesAs(result.state, previous, subject.state);
    return {
      vehicleId: subject.id,
      companyId: subject.companyId,
      health: result.health,
      linkBroken: result.linkBroken,
      odometer: odometerChanged ? odometer : null,
      visibleChange,
      stateChanged,
      state: stateChanged || !subject.state ? storedHealthState(result.state) : subject.state,
      fedThrough,
      recheckAt: result.recheckAtMs === null ? null : new Date(result.recheckAtMs),
      events: result.events,
    };
  });
  const monitoredIds = new Set(monitoredEvaluations.map((m) => m.vehicleId));
  const mustWrite = (w: HealthWrite) => monitoredIds.has(w.vehicleId) || writesSomething(w);
  let writes = evaluations;
  if (options.locking !== 'first') {
    const wanted = new Set(evaluations.filter(mustWrite).map((w) => w.vehicleId));
    const held = await holdUnchanged(tx, options.locking, subjects, wanted);
    if (options.locking === 'to-write' && held.size < wanted.size) return nothingEvaluated(true);
    writes = evaluations.filter((w) => !wanted.has(w.vehicleId) || held.has(w.vehicleId));
  }
  const kept = options.locking === 'first' ? null : new Set(writes.map((w) => w.vehicleId));
  await saveHealth(tx, writes, now);
  const monitoring = await detectAndStore(
    tx,
    kept ? monitoredEvaluations.filter((m) => kept.has(m.vehicleId)) : monitoredEvaluations,
    now,
    loadVehiclePredictions,
  );
  return {
    evaluated: writes.length,
    changed: writes.filter((w) => w.visibleChange).map((w) => w.vehicleId),
    events: writes.reduce((sum, w) => sum + w.events.length, 0),
    monitoringLanes: monitoring.lanes,
    monitoringKinds: monitoring.kinds,
    moved: false,
  };
}

const writesSomething = (w: HealthWrite) => w.stateChanged || w.visibleChange || w.events.length > 0;

/**
 * Of the vehicles read without locks, those with something to write (`wanted`) that this
 * transaction now holds with nothing moved since the read: locked (`skip`: only if the vehicle row
 * is the version read, skipping any another transaction holds; `to-write`: if the health inputs
 * are, waiting), then kept if the state row is the version read too. A vehicle written since the
 * read is not written: what it was evaluated from is no longer current, and writing it could take
 * its health back to an older state. An evaluation with nothing to write is never locked: it
 * reports the vehicle evaluated and writes nothing.
 */
async function holdUnchanged(
  tx: PoolClient,
  locking: 'skip' | 'to-write',
  subjects: readonly HealthSubject[],
  wanted: ReadonlySet<string>,
): Promise<Set<string>> {
  if (wanted.size === 0) return new Set();
  const claims = subjects.filter((s) => wanted.has(s.id));
  const locked = new Set(
    locking === 'skip' ? await lockUnchangedVehicles(tx, claims) : await lockVehiclesWithUnchangedInputs(tx, claims),
  );
  const lockedClaims = claims.filter((c) => locked.has(c.id));
  return new Set(lockedClaims.length > 0 ? await unchangedHealthStates(tx, lockedClaims) : []);
}

/**
 * When a vehicle changes hands, in the transfer's transaction (after the vehicle row moved): the
 * health state restarts from the link state alone (healthStateForNewOwner) and only the odometer
 * watermarks stay, so the rules and detectors read every other signal anew from the start of the
 * new owner's span (db/health.ts `loadNewSamples` never reads before it). The vehicle is then
 * evaluated at once, so its health is the new owner's when the transfer answers.
 */
export async function restartHealthForNewOwner(
  tx: PoolClient,
  vehicleId: string,
  now: Date,
): Promise<EvaluationSummary | null> {
  const [subject] = await lockHealthSubjects(tx, [vehicleId]);
  // A deactivated vehicle is never evaluated again (nothing reactivates one).
  if (!subject) return null;
  const state = healthStateForNewOwner(subject.state && loadedHealthState(subject.state));
  const fedThrough = Object.fromEntries(
    Object.entries(subject.fedThrough).filter(([signal]) => isOdometerSignal(signal)),
  );
  await saveHealth(
    tx,
    [
      {
        vehicleId,
        companyId: subject.companyId,
        health: { status: state.status, alerts: [] },
        linkBroken: null,
        odometer: null,
        visibleChange: true,
        stateChanged: true,
        state: storedHealthState(state),
        fedThrough,
        recheckAt: now,
        events: [],
      },
    ],
    now,
  );
  return evaluateVehicles(tx, [vehicleId], now, { locking: 'first', cascade: true });
}

/** Vehicles per sweep transaction: small enough to keep the row locks of its writes short. */
const sweepPageSize = 500;
/**
 * Monitored vehicles per sweep transaction. The sweep takes every monitored vehicle, and each one
 * that is driving has its unfed samples of every rule and detector signal (up to
 * `maxSamplesPerSignal` each) waiting for its own evaluation: a soak's page of 500 held ~120,000
 * samples, took the health worker to 723 MiB and ingest's push-to-visible p99 to 9 s while it ran
 * (docs/performance.md, "The sweep's pages of monitored vehicles").
 */
export const monitoredSweepPageSize = 50;

/** The sweep's pages: unmonitored vehicles by `sweepPageSize`, then monitored ones by `monitoredSweepPageSize`. */
export function sweepPagesOf(due: ReadonlyArray<{ id: string; monitored: boolean }>): string[][] {
  const pages: string[][] = [];
  for (const [monitored, size] of [
    [false, sweepPageSize],
    [true, monitoredSweepPageSize],
  ] as const) {
    const ids = due.filter((vehicle) => vehicle.monitored === monitored).map((vehicle) => vehicle.id);
    for (let start = 0; start < ids.length; start += size) pages.push(ids.slice(start, start + size));
  }
  return pages;
}

/**
 * The sweep: the active vehicles that may have something to evaluate (db/health.ts
 * `listVehiclesToSweep`: never evaluated, a recheck time reached, monitored, or in this sweep's
 * quarter of the hourly full evaluation, health/recheck.ts), in pages (`sweepPagesOf`), one
 * transaction each, so time-based conditions (staleness, due dates) change without new samples.
 * Each evaluation stores when its result can next change by time alone: a steady sweep evaluates
 * about a quarter of the fleet, not all of it. `concurrentPages`
 * pages are evaluated at once, each on its own pool connection: one page's rules run in Node while
 * another's statements run in Postgres. Pages hold disjoint vehicles, so they never wait for each
 * other's row locks. `afterPage` runs after each commit with the page's summary (pages may commit
 * out of order). A failed page stops the sweep: pages already committed stay, the next sweep
 * evaluates every vehicle still due.
 *
 * A page reads its vehicles without locks and locks only those it has something to write for
 * (`evaluateVehicles` with `skip`): a page of a steady sweep, where nothing changed, writes
 * nothing at all, where a row lock per vehicle dirtied every page of `vehicles` and wrote WAL.
 *
 * One sweep at a time in the deployment (an advisory lock; `skipped` when another holds it). BullMQ
 * takes a job back when its lock is not renewed for the health queue's 10 s, which an event loop
 * stalled that long causes, and a sweep that outlasts its 15-minute period meets the next one: a
 * second sweep beside the first would be correct (pages skip locked vehicles, an evaluation with
 * nothing new changes nothing) but would double the work of the largest job there is.
 */
export async function sweepHealth(
  pool: Pool,
  now: () => Date,
  concurrentPages: number,
  afterPage: (page: EvaluationSummary) => Promise<void> = async () => {},
): Promise<{ evaluated: number; changed: number; skipped: boolean }> {
  const swept = await whileHoldingLock(pool, 'health sweep', () => sweepPages(pool, now, concurrentPages, afterPage));
  return swept ? { ...swept, skipped: false } : { evaluated: 0, changed: 0, skipped: true };
}

async function sweepPages(
  pool: Pool,
  now: () => Date,
  concurrentPages: number,
  afterPage: (page: EvaluationSummary) => Promise<void>,
): Promise<{ evaluated: number; changed: number }> {
  let failed = false;
  let evaluated = 0;
  let changed = 0;
  // Listed at once: one pass over both tables, where a listing per page visited each vehicle's
  // rows one index probe at a time (ids are random, so nearly a heap page each).
  const started = now();
  const due = await listVehiclesToSweep(pool, started, {
    of: fullEvaluationSweeps,
    index: fullEvaluationShare(started.getTime()),
  });
  const pages = sweepPagesOf(due);
  let next = 0;
  const nextPage = (): readonly string[] => (failed ? [] : (pages[next++] ?? []));
  const evaluatePages = async () => {
    try {
      for (let ids = nextPage(); ids.length > 0; ids = nextPage()) {
        const page = await withTransaction(pool, (tx) =>
          evaluateVehicles(tx, ids, now(), { locking: 'skip', cascade: true }),
        );
        evaluated += page.evaluated;
        changed += page.changed.length;
        await afterPage(page);
      }
    } catch (error) {
      failed = true;
      throw error;
    }
  };
  const lanes = await Promise.allSettled(Array.from({ length: concurrentPages }, evaluatePages));
  const failure = lanes.find((lane) => lane.status === 'rejected');
  if (failure) throw failure.reason;
  return { evaluated, changed };
}
