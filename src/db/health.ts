/** Statements of the health stage: what an evaluation reads for a set of vehicles, and what it writes. */
import type { HealthEvent, StoredHealthState } from '../domain/health.js';
import type { DeepPartial, HealthConfig } from '../domain/health-config.js';
import type { RuleSample } from '../domain/sample.js';
import { odometerSignals } from '../domain/sample.js';
import type { LinkBroken, VehicleHealth } from '../domain/vehicle.js';
import { ownedSinceSql } from './ownership.js';
import type { Queryable } from './pool.js';

export interface HealthSubject {
  id: string;
  companyId: string;
  telematicsProvider: string | null;
  createdAt: Date;
  hasTelemetry: boolean;
  health: VehicleHealth;
  linkBroken: LinkBroken | null;
  odometer: { km: number; as_of: string; source: string } | null;
  companyConfig: DeepPartial<HealthConfig>;
  vehicleConfig: DeepPartial<HealthConfig>;
  /** As stored (compact: src/health/stored-state.ts), null before the first evaluation. */
  state: StoredHealthState | null;
  /** Per signal, the newest sample time fed to the rules (ISO 8601); a signal never fed is absent. */
  fedThrough: Record<string, string>;
  /** The vehicle row's version as read (`xmin`): the sweep writes only if it has not moved since. */
  vehicleVersion: string;
  /**
   * A digest of what an evaluation reads of the vehicle row and ingest never writes
   * (`healthInputsSql`); null where it is not read (the sweep, a vehicle locked first): only an
   * evaluation locked to write compares it.
   */
  inputsVersion: string | null;
  /** The state row's version as read, null without one. */
  stateVersion: string | null;
  /** When the result can next change by time alone, as stored (null: never; the epoch: at the next sweep). */
  recheckAt: Date | null;
}

/**
 * The vehicle row's part that only health evaluations, transfers, the manual odometer and
 * integrators write: what was read for an evaluation is still current when this digest is. Ingest
 * writes the rest of the row (`signals` but for the odometer, `as_of`) in nearly every batch, and
 * queues an evaluation of its own for what it wrote.
 */
const healthInputsSql = `md5(jsonb_build_array(v.health, v.link_broken, v.signals -> 'odometer', v.health_config,
                                  v.telematics_provider, v.company_id)::text)`;

/**
 * What a health evaluation reads of each vehicle, locked first (one vehicle) or not, with the
 * health inputs digest only when asked (an md5 per vehicle that a sweep page would not use).
 */
function healthSubjectsSql(lock: string, inputs: boolean): string {
  return `SELECT v.id, v.company_id AS "companyId", v.telematics_provider AS "telematicsProvider", v.created_at AS "createdAt",
                 v.signals <> '{}'::jsonb AS "hasTelemetry", v.health, v.link_broken AS "linkBroken",
                 v.signals -> 'odometer' AS odometer, c.health_config AS "companyConfig", v.health_config AS "vehicleConfig",
                 s.state, coalesce(s.fed_through, '{}'::jsonb) AS "fedThrough",
                 v.xmin::text AS "vehicleVersion", ${inputs ? healthInputsSql : 'NULL::text'} AS "inputsVersion",
                 s.xmin::text AS "stateVersion", s.recheck_at AS "recheckAt"
          FROM vehicles v
          JOIN companies c ON c.id = v.company_id
          LEFT JOIN vehicle_health_state s ON s.vehicle_id = v.id
          WHERE v.id = ANY($1::uuid[]) AND v.active
          ORDER BY v.id ${lock}`;
}

/** Locks and loads the active vehicles among `ids` with their health state (the lock order of db/vehicle-state.ts). */
export async function lockHealthSubjects(q: Queryable, ids: readonly string[]): Promise<HealthSubject[]> {
  const result = await q.query<HealthSubject>({
    name: 'lock-health-subjects',
    text: healthSubjectsSql('FOR NO KEY UPDATE OF v', false),
    values: [ids],
  });
  return result.rows;
}

/**
 * Loads the active vehicles among `ids` with their health state, without locking them: the sweep
 * locks only the few it has something to write for (`lockUnchangedVehicles`), so an idle sweep
 * writes nothing, not even a row lock into every page of `vehicles`. `inputsVersion`: read the
 * health inputs digest too, for an evaluation locked only to write (`lockVehiclesWithUnchangedInputs`).
 */
export async function loadHealthSubjects(
  q: Queryable,
  ids: readonly string[],
  options: { inputsVersion: boolean },
): Promise<HealthSubject[]> {
  const result = await q.query<HealthSubject>(
    options.inputsVersion
      ? { name: 'load-health-subjects-with-inputs', text: healthSubjectsSql('', true), values: [ids] }
      : { name: 'load-health-subjects', text: healthSubjectsSql('', false), values: [ids] },
  );
  return result.rows;
}

/** A vehicle read unlocked, with the row versions it was read at. */
export interface HealthClaim {
  id: string;
  vehicleVersion: string;
  stateVersion: string | null;
}

/**
 * Locks those of `claims` whose vehicle row is still the version that was read, in id order,
 * skipping any another transaction holds (its own evaluation follows); returns their ids. A row
 * updated since is re-checked by Postgres at its newest version, so it fails the comparison.
 */
export async function lockUnchangedVehicles(q: Queryable, claims: readonly HealthClaim[]): Promise<string[]> {
  const result = await q.query<{ id: string }>({
    name: 'lock-unchanged-vehicles',
    text: `SELECT v.id FROM vehicles v
           JOIN unnest($1::uuid[], $2::text[]) AS c(id, version) ON c.id = v.id
           WHERE v.xmin::text = c.version
           ORDER BY v.id
           FOR NO KEY UPDATE OF v SKIP LOCKED`,
    values: [claims.map((c) => c.id), claims.map((c) => c.vehicleVersion)],
  });
  return result.rows.map((r) => r.id);
}

/**
 * Locks those of `subjects` that are still active with the health inputs that were read, in id
 * order, waiting for other writers (an ingest batch commits in well under a second); returns
 * their ids. After a wait Postgres re-checks the newest version of the row, so an input changed
 * meanwhile fails the comparison; a subject read without its digest never passes it.
 */
export async function lockVehiclesWithUnchangedInputs(
  q: Queryable,
  subjects: ReadonlyArray<Pick<HealthSubject, 'id' | 'inputsVersion'>>,
): Promise<string[]> {
  const result = await q.query<{ id: string }>({
    name: 'lock-vehicles-with-unchanged-inputs',
    text: `SELECT v.id FROM vehicles v
           JOIN unnest($1::uuid[], $2::text[]) AS c(id, inputs) ON c.id = v.id
           WHERE v.active AND ${healthInputsSql} = c.inputs
           ORDER BY v.id
           FOR NO KEY UPDATE OF v`,
    values: [subjects.map((s) => s.id), subjects.map((s) => s.inputsVersion)],
  });
  return result.rows.map((r) => r.id);
}

/**
 * Of `claims` whose vehicles this transaction holds locked, the ids whose health state row is
 * still the version that was read (or still absent). Run after the lock, in its own statement:
 * an evaluation that wrote the state and committed before the lock was taken is visible only to
 * a snapshot taken after it.
 */
export async function unchangedHealthStates(q: Queryable, claims: readonly HealthClaim[]): Promise<string[]> {
  const result = await q.query<{ id: string }>({
    name: 'unchanged-health-states',
    text: `SELECT c.id FROM unnest($1::uuid[], $2::text[]) AS c(id, version)
           LEFT JOIN vehicle_health_state s ON s.vehicle_id = c.id
           WHERE s.xmin::text IS NOT DISTINCT FROM c.version`,
    values: [claims.map((c) => c.id), claims.map((c) => c.stateVersion)],
  });
  return result.rows.map((r) => r.id);
}

/** The signals the rules read. */
export const ruleSignals = [
  'odometer_km',
  'gps_odometer_km',
  'battery_voltage',
  'engine_state',
  'coolant_temp_c',
  'tire_pressure_kpa',
  'fuel_percent',
  'dtcs',
  'check_engine_light',
  'brake_lining_percent',
] as const;

/** A new sample, and whether a refresh without cascade stored it (the alert rules and detectors pass over those). */
export interface NewSample extends RuleSample {
  withoutCascade: boolean;
}

/**
 * Per vehicle, the readings of each rule signal newer than its watermark in `fed_through` (a
 * signal never fed: its newest readings, however old, a backfill), and of each extra window's
 * signal newer than its `since`; at most `limit` per signal, the newest, grouped by vehicle. The
 * watermarks are read here rather than sent: 10 windows per vehicle cost more to encode than to
 * look up. Each (vehicle, signal) is one ordered scan of the primary key.
 *
 * Only the rule signals whose latest sample (its time in the vehicle row's `signals.observed_at`,
 * written in the transaction of every stored reading: ingest and the manual odometer) is newer
 * than the watermark are scanned: a signal a vehicle never reported, or with nothing new since its
 * last evaluation, costs a look at the vehicle row instead of a probe of every `readings`
 * partition (most of a steady sweep's time). That
 * latest sample also bounds each scan from above (nothing of the signal is newer), so Postgres
 * prunes the partitions after it at run time: the months ahead that `ensureReadingPartitions`
 * keeps ready, three of the six partitions a first feed would otherwise probe. The detectors'
 * windows have no such bound.
 *
 * Nothing taken before the vehicle's current owner got it from a previous owner is read
 * (db/ownership.ts `ownedSinceSql`; docs/ownership.md), except the odometer series, which travel with
 * the car.
 */
export async function loadNewSamples(
  q: Queryable,
  vehicleIds: readonly string[],
  extraWindows: ReadonlyArray<{ vehicleId: string; signal: string; since: Date }>,
  limit: number,
): Promise<Map<string, NewSample[]>> {
  const samples = new Map<string, NewSample[]>();
  if (vehicleIds.length === 0 && extraWindows.length === 0) return samples;
  const result = await q.query<NewSample & { vehicleId: string }>({
    name: 'load-new-samples',
    text: `WITH windows AS (
             SELECT l.vehicle_id, l.signal, w.since, l.recorded_at AS until
             FROM vehicles ve
             CROSS JOIN LATERAL (
               SELECT ve.id AS vehicle_id, o.key AS signal, o.value::timestamptz AS recorded_at
               FROM jsonb_each_text(ve.signals -> 'observed_at') o WHERE o.key = ANY($2::text[])
             ) l
             LEFT JOIN vehicle_health_state h ON h.vehicle_id = l.vehicle_id
             CROSS JOIN LATERAL (SELECT coalesce((h.fed_through ->> l.signal)::timestamptz, 'epoch') AS since) w
             WHERE ve.id = ANY($1::uuid[]) AND l.recorded_at > w.since
             UNION ALL
             SELECT *, 'infinity'::timestamptz FROM unnest($3::uuid[], $4::text[], $5::timestamptz[])
           )
           SELECT w.vehicle_id AS "vehicleId", w.signal, r.recorded_at AS "recordedAt", r.value, r.source,
                  r.without_cascade IS TRUE AS "withoutCascade"
           FROM windows w
           CROSS JOIN LATERAL (
             SELECT CASE WHEN w.signal = ANY ($7::text[]) THEN NULL ELSE ${ownedSinceSql('w.vehicle_id')} END AS since
           ) owned
           CROSS JOIN LATERAL (
             SELECT recorded_at, coalesce(to_jsonb(value_num), value_json) AS value, source, without_cascade
             FROM readings
             WHERE vehicle_id = w.vehicle_id AND signal = w.signal AND recorded_at > w.since AND recorded_at <= w.until
               AND recorded_at >= coalesce(owned.since, '-infinity')
             ORDER BY recorded_at DESC LIMIT $6
           ) r
           ORDER BY w.vehicle_id, r.recorded_at, w.signal`,
    values: [
      vehicleIds,
      ruleSignals,
      extraWindows.map((w) => w.vehicleId),
      extraWindows.map((w) => w.signal),
      extraWindows.map((w) => w.since),
      limit,
      odometerSignals,
    ],
  });
  for (const { vehicleId, ...sample } of result.rows) {
    const list = samples.get(vehicleId) ?? [];
    list.push(sample);
    samples.set(vehicleId, list);
  }
  return samples;
}

/** The last service of each type per vehicle: operator service entries and completed runs' items. */
export async function loadLastServices(
  q: Queryable,
  ids: readonly string[],
): Promise<Map<string, Record<string, { at: Date; odometerKm: number | null }>>> {
  const result = await q.query<{ vehicleId: string; type: string; at: Date; odometerKm: number | null }>({
    name: 'load-last-services',
    text: `SELECT DISTINCT ON (vehicle_id, type) vehicle_id AS "vehicleId", type, at, odometer_km AS "odometerKm"
           FROM (
             SELECT vehicle_id, type, performed_at AS at, odometer_km FROM service_entries WHERE vehicle_id = ANY($1::uuid[])
             UNION ALL
             SELECT r.vehicle_id, item ->> 'type', r.completed_at, r.completed_odometer_km
             FROM runs r CROSS JOIN jsonb_array_elements(r.items) AS item
             WHERE r.vehicle_id = ANY($1::uuid[]) AND r.status = 'completed'
           ) services
           WHERE type IS NOT NULL AND at IS NOT NULL
           ORDER BY vehicle_id, type, at DESC`,
    values: [ids],
  });
  const services = new Map<string, Record<string, { at: Date; odometerKm: number | null }>>();
  for (const row of result.rows) {
    const byType = services.get(row.vehicleId) ?? {};
    byType[row.type] = { at: row.at, odometerKm: row.odometerKm };
    services.set(row.vehicleId, byType);
  }
  return services;
}

export interface HealthWrite {
  vehicleId: string;
  companyId: string;
  health: VehicleHealth;
  linkBroken: LinkBroken | null;
  /** The trusted odometer for `signals.odometer`, or null to leave it as it is. */
  odometer: { km: number; as_of: string; source: string } | null;
  /** Health, link or odometer changed: updated_at moves. */
  visibleChange: boolean;
  /** The rules' state or a signal's watermark moved: the state row is written. */
  stateChanged: boolean;
  state: StoredHealthState;
  fedThrough: Record<string, string>;
  /** When the result can next change by time alone (`recheck_at`); null: never. */
  recheckAt: Date | null;
  events: HealthEvent[];
}

export async function saveHealth(q: Queryable, writes: readonly HealthWrite[], evaluatedAt: Date): Promise<void> {
  if (writes.length === 0) return;
  const changed = writes.filter((w) => w.visibleChange);
  if (changed.length > 0) {
    await q.query({
      name: 'save-vehicle-health',
      text: `UPDATE vehicles v SET
               health = c.health,
               link_broken = c.link_broken,
               signals = CASE WHEN c.odometer IS NULL THEN v.signals ELSE jsonb_set(v.signals, '{odometer}', c.odometer) END,
               updated_at = clock_timestamp()
             FROM jsonb_to_recordset($1::jsonb) AS c(id uuid, health jsonb, link_broken jsonb, odometer jsonb)
             WHERE v.id = c.id`,
      values: [
        JSON.stringify(
          changed.map((w) => ({ id: w.vehicleId, health: w.health, link_broken: w.linkBroken, odometer: w.odometer })),
        ),
      ],
    });
  }
  const states = writes.filter((w) => w.stateChanged);
  if (states.length > 0) {
    await q.query({
      name: 'save-health-state',
      text: `INSERT INTO vehicle_health_state (vehicle_id, fed_through, state, evaluated_at, recheck_at)
             SELECT id, fed_through, state, $2, recheck_at
             FROM jsonb_to_recordset($1::jsonb) AS s(id uuid, fed_through jsonb, state jsonb, recheck_at timestamptz)
             ON CONFLICT (vehicle_id) DO UPDATE
               SET fed_through = excluded.fed_through, state = excluded.state, evaluated_at = excluded.evaluated_at,
                   recheck_at = excluded.recheck_at`,
      values: [
        JSON.stringify(
          states.map((w) => ({ id: w.vehicleId, fed_through: w.fedThrough, state: w.state, recheck_at: w.recheckAt })),
        ),
        evaluatedAt,
      ],
    });
  }
  const events = writes.flatMap((w) =>
    w.events.map((e) => ({ company: w.companyId, vehicle: w.vehicleId, kind: e.kind, payload: e.payload })),
  );
  if (events.length > 0) {
    await q.query({
      name: 'insert-health-events',
      text: `INSERT INTO health_events (company_id, vehicle_id, kind, payload)
             SELECT company, vehicle, kind, payload FROM jsonb_to_recordset($1::jsonb) AS e(company uuid, vehicle uuid, kind text, payload jsonb)`,
      values: [JSON.stringify(events)],
    });
  }
}

/**
 * The vehicles a sweep at `now` evaluates, in id order: the active ones with no state yet, a
 * recheck time reached, a live monitoring subscription (the detectors run every sweep), or the
 * id's last byte in this sweep's share of full evaluations (health/recheck.ts). The others would
 * come out of an evaluation exactly as they are stored, unless an evaluation owed to new samples
 * was lost with Redis: the full evaluation takes those within the hour (comparing each signal's
 * latest sample with its watermark here cost ~18 µs of Postgres per vehicle, most of the listing).
 * Each says whether it is monitored: the sweep pages those smaller.
 */
export async function listVehiclesToSweep(
  q: Queryable,
  now: Date,
  share: { of: number; index: number },
): Promise<Array<{ id: string; monitored: boolean }>> {
  const result = await q.query<{ id: string; monitored: boolean }>({
    name: 'list-vehicles-to-sweep',
    text: `SELECT v.id, m.monitored FROM vehicles v
           LEFT JOIN vehicle_health_state h ON h.vehicle_id = v.id
           CROSS JOIN LATERAL (
             SELECT EXISTS (SELECT FROM monitoring_subscriptions s WHERE s.vehicle_id = v.id AND s.deleted_at IS NULL) AS monitored
           ) m
           WHERE v.active
             AND (h.vehicle_id IS NULL OR h.recheck_at <= $1 OR get_byte(uuid_send(v.id), 15) % $2 = $3 OR m.monitored)
           ORDER BY v.id`,
    values: [now, share.of, share.index],
  });
  return result.rows;
}

/** A company's health overrides changed: its vehicles are evaluated at the next sweep (a recheck time long past). */
export async function recheckCompanyVehicles(q: Queryable, companyId: string): Promise<void> {
  await q.query({
    name: 'recheck-company-vehicles',
    text: `UPDATE vehicle_health_state h SET recheck_at = 'epoch'
           FROM vehicles v WHERE v.id = h.vehicle_id AND v.company_id = $1
             AND (h.recheck_at IS NULL OR h.recheck_at > 'epoch')`,
    values: [companyId],
  });
}
