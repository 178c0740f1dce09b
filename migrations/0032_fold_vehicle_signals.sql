-- The latest state per signal moves into the vehicle row, so ingest writes one row per vehicle and
-- batch instead of one per vehicle and signal (docs/performance.md, "One write per vehicle and
-- batch"). The row already held each signal's time (`signals.observed_at`) and each value but the
-- odometer series' (`signals` shows the trusted odometer instead); those values, which decide
-- whether a value changed, get their own column, kept out of the read model.
ALTER TABLE vehicles ADD COLUMN odometer_values jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Every write of vehicle_signals wrote the same times into `observed_at` in its transaction; a time
-- only vehicle_signals holds (a row written outside ingest) is kept, so an older sample never wins
-- over it. Times in the format ingest writes (a JavaScript Date's ISO string).
WITH latest AS (
  SELECT vehicle_id,
         jsonb_object_agg(signal, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS observed,
         coalesce(jsonb_object_agg(signal, value) FILTER (WHERE signal IN ('odometer_km', 'gps_odometer_km')), '{}') AS odometers
  FROM vehicle_signals GROUP BY vehicle_id
)
UPDATE vehicles v SET
  signals = v.signals || jsonb_build_object('observed_at', l.observed || coalesce(v.signals -> 'observed_at', '{}')),
  odometer_values = l.odometers
FROM latest l
WHERE v.id = l.vehicle_id;

DROP TABLE vehicle_signals;
