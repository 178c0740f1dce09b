/**
 * What a monitoring dry run reads (POST /v1/subscriptions/:id/dry-run): the vehicle's facts and
 * health configuration, and its stored readings and provider events over a window. Read-only.
 * The window is read in pages along the primary keys (a few thousand rows per statement, each
 * page one JSON text), so a 100,000-reading window never holds the API's event loop for long,
 * and the readers stop one row past the caller's maximum, so a window holding millions of rows
 * costs at most that many row reads before the caller refuses it.
 *
 * The window never reaches before the vehicle's current owner got it from a previous owner
 * (db/ownership.ts `ownedSinceSql`; docs/ownership.md): a dry run replays only the owner's own readings
 * and events, the odometer's included (an event is always caused by a reading of the owner's span).
 */
import type { DeepPartial, HealthConfig } from '../domain/health-config.js';
import type { RuleSample } from '../domain/sample.js';
import type { EventSample } from '../domain/sample.js';
import { ownedSinceSql } from './ownership.js';
import type { Queryable } from './pool.js';

export interface DryRunVehicle {
  telematicsProvider: string | null;
  createdAt: Date;
  companyConfig: DeepPartial<HealthConfig>;
  vehicleConfig: DeepPartial<HealthConfig>;
}

/** The vehicle (active or not: history stays) with its company's and its own health overrides. */
export async function loadDryRunVehicle(
  q: Queryable,
  companyId: string,
  vehicleId: string,
): Promise<DryRunVehicle | null> {
  const result = await q.query<DryRunVehicle>(
    `SELECT v.telematics_provider AS "telematicsProvider", v.created_at AS "createdAt",
            c.health_config AS "companyConfig", v.health_config AS "vehicleConfig"
     FROM vehicles v JOIN companies c ON c.id = v.company_id
     WHERE v.id = $1 AND v.company_id = $2`,
    [vehicleId, companyId],
  );
  return result.rows[0] ?? null;
}

/**
 * Rows of a window as one JSON text (an array of objects): the API process hands it to a CPU-pool
 * thread unparsed, so `pg` parses one text field per page, never thousands of rows, on the event
 * loop; the thread parses it (`readingsOfPage`, `eventsOfPage`). `last` is the key of its last row
 * as Postgres prints it, exact to the microsecond, where the next page starts after.
 */
export interface JsonPage<Key> {
  json: string;
  rows: number;
  last: Key | null;
}

/**
 * One page of the vehicle's readings of `signal` recorded in [since, until], after `after` (a
 * previous page's `last`), oldest first: at most `limit` rows, one range of the primary key.
 */
export async function loadReadingsPage(
  q: Queryable,
  vehicleId: string,
  signal: string,
  since: Date,
  until: Date,
  after: string | null,
  limit: number,
): Promise<JsonPage<string>> {
  const result = await q.query<JsonPage<string>>({
    name: 'load-readings-page',
    text: `WITH page AS (
             SELECT recorded_at, coalesce(to_jsonb(value_num), value_json) AS value, source
             FROM readings
             WHERE vehicle_id = $1 AND signal = $2 AND recorded_at >= $3 AND recorded_at <= $4
               AND recorded_at > coalesce($5::timestamptz, '-infinity')
               AND recorded_at >= coalesce(${ownedSinceSql('$1')}, '-infinity')
             ORDER BY recorded_at
             LIMIT $6
           )
           SELECT coalesce(json_agg(json_build_object(
                    'signal', $2::text, 'recordedAt', (extract(epoch FROM recorded_at) * 1000)::float8,
                    'value', value, 'source', source) ORDER BY recorded_at), '[]')::text AS json,
                  count(*)::int AS rows, max(recorded_at)::text AS last
           FROM page`,
    values: [vehicleId, signal, since, until, after, limit],
  });
  return result.rows[0]!;
}

/** The readings of a page from `loadReadingsPage`, on the thread that replays them. */
export function readingsOfPage(json: string): RuleSample[] {
  const rows = JSON.parse(json) as Array<Omit<RuleSample, 'recordedAt'> & { recordedAt: number | Date }>;
  for (const row of rows) row.recordedAt = new Date(row.recordedAt);
  return rows as RuleSample[];
}

/**
 * The vehicle's readings of `signals` in [since, until] in pages of at most `pageRows`: signal
 * by signal, each oldest first (the replay orders them by time itself). Stops once `limit` rows
 * are read, so more than `limit - 1` means the window holds more than the caller takes; each page
 * is a statement of its own (a reading stored meanwhile may be in the window or not).
 */
export async function* readingPagesBetween(
  q: Queryable,
  vehicleId: string,
  signals: readonly string[],
  since: Date,
  until: Date,
  limit: number,
  pageRows: number,
): AsyncGenerator<JsonPage<string>> {
  let left = limit;
  for (const signal of signals) {
    let after: string | null = null;
    while (left > 0) {
      const size = Math.min(pageRows, left);
      const page = await loadReadingsPage(q, vehicleId, signal, since, until, after, size);
      if (page.rows === 0) break;
      left -= page.rows;
      yield page;
      if (page.rows < size) break;
      after = page.last;
    }
  }
}

/** Where a page of provider events ends: the primary key after the vehicle, as Postgres prints it. */
export interface EventKey {
  kind: string;
  recordedAt: string;
}

/**
 * One page of the vehicle's provider events recorded in [since, until] after the key `after`, in
 * the primary key's order (kind, then time): at most `limit` rows.
 */
export async function loadVehicleEventsPage(
  q: Queryable,
  vehicleId: string,
  since: Date,
  until: Date,
  after: EventKey | null,
  limit: number,
): Promise<JsonPage<EventKey>> {
  const result = await q.query<JsonPage<EventKey>>({
    name: 'load-vehicle-events-page',
    text: `WITH page AS (
             SELECT kind, recorded_at, g FROM vehicle_events
             WHERE vehicle_id = $1 AND recorded_at >= $2 AND recorded_at <= $3
               AND (kind, recorded_at) > (coalesce($4, ''), coalesce($5::timestamptz, '-infinity'))
               AND recorded_at >= coalesce(${ownedSinceSql('$1')}, '-infinity')
             ORDER BY kind, recorded_at
             LIMIT $6
           )
           SELECT coalesce(json_agg(json_build_object(
                    'kind', kind, 'recordedAt', (extract(epoch FROM recorded_at) * 1000)::float8, 'g', g)
                    ORDER BY kind, recorded_at), '[]')::text AS json,
                  count(*)::int AS rows,
                  (SELECT json_build_object('kind', kind, 'recordedAt', recorded_at::text)
                   FROM page ORDER BY kind DESC, recorded_at DESC LIMIT 1) AS last
           FROM page`,
    values: [vehicleId, since, until, after?.kind ?? null, after?.recordedAt ?? null, limit],
  });
  return result.rows[0]!;
}

/** The provider events of a page from `loadVehicleEventsPage`, on the thread that replays them. */
export function eventsOfPage(json: string): EventSample[] {
  const rows = JSON.parse(json) as Array<Omit<EventSample, 'recordedAt'> & { recordedAt: number | Date }>;
  for (const row of rows) row.recordedAt = new Date(row.recordedAt);
  return rows as EventSample[];
}

/** The vehicle's provider events in [since, until] in pages of at most `pageRows`; at most `limit` rows (as above). */
export async function* vehicleEventPagesBetween(
  q: Queryable,
  vehicleId: string,
  since: Date,
  until: Date,
  limit: number,
  pageRows: number,
): AsyncGenerator<JsonPage<EventKey>> {
  let [left, after] = [limit, null as EventKey | null];
  while (left > 0) {
    const size = Math.min(pageRows, left);
    const page = await loadVehicleEventsPage(q, vehicleId, since, until, after, size);
    if (page.rows === 0) return;
    left -= page.rows;
    yield page;
    if (page.rows < size) return;
    after = page.last;
  }
}
