/**
 * What a monitoring dry run reads (POST /v1/subscriptions/:id/dry-run): the vehicle's facts and
 * health configuration, and its stored readings and provider events over a window. Read-only.
 * The window's rows are fetched unordered with a LIMIT one past the caller's maximum and sorted
 * afterwards, so a window holding millions of rows costs at most that many row reads before the
 * caller refuses it.
 *
 * The window never reaches before the vehicle's current owner got it from a previous owner
 * (db/ownership.ts `ownedSinceSql`; docs/ownership.md): a dry run replays only the owner's own readings
 * and events, the odometer's included (an event is always caused by a reading of the owner's span).
 */
import type { DeepPartial, HealthConfig } from '../health/config.js';
import type { RuleSample } from '../health/types.js';
import type { EventSample } from '../monitoring/types.js';
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
 * The vehicle's readings of `signals` recorded in [since, until], oldest first; at most `limit`
 * rows, so more than `limit - 1` means the window holds more than the caller takes.
 */
export async function loadReadingsBetween(
  q: Queryable,
  vehicleId: string,
  signals: readonly string[],
  since: Date,
  until: Date,
  limit: number,
): Promise<RuleSample[]> {
  const result = await q.query<RuleSample>({
    name: 'load-readings-between',
    text: `WITH window_rows AS MATERIALIZED (
             SELECT signal, recorded_at, coalesce(to_jsonb(value_num), value_json) AS value, source
             FROM readings
             WHERE vehicle_id = $1 AND signal = ANY ($2::text[]) AND recorded_at >= $3 AND recorded_at <= $4
               AND recorded_at >= coalesce(${ownedSinceSql('$1')}, '-infinity')
             LIMIT $5
           )
           SELECT signal, recorded_at AS "recordedAt", value, source FROM window_rows ORDER BY recorded_at, signal`,
    values: [vehicleId, signals, since, until, limit],
  });
  return result.rows;
}

/** The vehicle's provider events recorded in [since, until], oldest first; at most `limit` rows (as above). */
export async function loadVehicleEventsBetween(
  q: Queryable,
  vehicleId: string,
  since: Date,
  until: Date,
  limit: number,
): Promise<EventSample[]> {
  const result = await q.query<EventSample>({
    name: 'load-vehicle-events-between',
    text: `WITH window_rows AS MATERIALIZED (
             SELECT kind, recorded_at, g FROM vehicle_events
             WHERE vehicle_id = $1 AND recorded_at >= $2 AND recorded_at <= $3
               AND recorded_at >= coalesce(${ownedSinceSql('$1')}, '-infinity')
             LIMIT $4
           )
           SELECT kind, recorded_at AS "recordedAt", g FROM window_rows ORDER BY recorded_at, kind`,
    values: [vehicleId, since, until, limit],
  });
  return result.rows;
}
