-- Poison isolation: an inbox row that fails on its own (after its batch failed) is parked with
-- its error instead of riding in every later batch. Parked rows are never picked by the batch
-- pick or the recovery sweep; `fleetctl inbox failed` lists them and `fleetctl inbox replay
-- --parked` retries them. `error` (0004) holds why the last processing did not succeed.
ALTER TABLE ingest_inbox
  ADD COLUMN parked_at timestamptz,
  ADD COLUMN failed_attempts integer NOT NULL DEFAULT 0;

DROP INDEX ingest_inbox_pending;
CREATE INDEX ingest_inbox_pending ON ingest_inbox (id) WHERE processed_at IS NULL AND parked_at IS NULL;
CREATE INDEX ingest_inbox_parked ON ingest_inbox (id) WHERE parked_at IS NOT NULL;

-- The health watermark, per signal: the newest sample time fed to the rules for each signal.
-- One time for all signals skipped a sample of one signal that committed after a newer sample of
-- another (two ingest transactions of one vehicle); per signal, such a sample is still newer than
-- anything fed of its own signal, so it is evaluated.
ALTER TABLE vehicle_health_state ADD COLUMN fed_through jsonb NOT NULL DEFAULT '{}'::jsonb;
UPDATE vehicle_health_state s
SET fed_through = (
  SELECT jsonb_object_agg(signal, s.evaluated_through)
  FROM unnest(ARRAY['odometer_km', 'gps_odometer_km', 'battery_voltage', 'engine_state', 'coolant_temp_c',
                    'tire_pressure_kpa', 'fuel_percent', 'dtcs', 'check_engine_light', 'brake_lining_percent']) AS signal
)
WHERE s.evaluated_through IS NOT NULL;
ALTER TABLE vehicle_health_state DROP COLUMN evaluated_through;
