-- Vehicle health: per-vehicle rule state, operator service entries, health config overrides and
-- the health events the monitoring and runs stages consume.

-- Overrides of the health defaults (src/health/config.ts), partial objects; vehicle over company.
ALTER TABLE companies ADD COLUMN health_config jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE vehicles ADD COLUMN health_config jsonb NOT NULL DEFAULT '{}'::jsonb;

-- The rules' state per vehicle and how far the samples have been fed to them.
CREATE TABLE vehicle_health_state (
  vehicle_id        uuid PRIMARY KEY REFERENCES vehicles (id),
  -- Newest sample time fed to the rules; later evaluations read only newer samples.
  evaluated_through timestamptz,
  state             jsonb NOT NULL,
  evaluated_at      timestamptz NOT NULL
) WITH (fillfactor = 70);

-- Service the operator records outside runs (maintenance done elsewhere, initial history).
CREATE TABLE service_entries (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id   uuid NOT NULL REFERENCES companies (id),
  vehicle_id   uuid NOT NULL REFERENCES vehicles (id),
  type         text NOT NULL,
  performed_at timestamptz NOT NULL,
  odometer_km  double precision,
  notes        text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_entries_vehicle ON service_entries (vehicle_id, type, performed_at DESC);
-- Maintenance reads the last completed run per vehicle.
CREATE INDEX runs_vehicle_completed ON runs (vehicle_id, completed_at DESC) WHERE status = 'completed';

-- What changed in a vehicle's health, written in the evaluation's transaction (an outbox for the
-- monitoring and runs stages). cascade false (a refresh that asked to stop after the vehicle
-- state) writes none.
CREATE TABLE health_events (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id  uuid NOT NULL REFERENCES companies (id),
  vehicle_id  uuid NOT NULL REFERENCES vehicles (id),
  kind        text NOT NULL CHECK (kind IN ('alert_opened', 'alert_changed', 'alert_resolved', 'status_changed', 'link_changed')),
  payload     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  consumed_at timestamptz
);
CREATE INDEX health_events_unconsumed ON health_events (id) WHERE consumed_at IS NULL;

-- The odometer when a run was completed: the meter of that service for maintenance intervals.
ALTER TABLE runs ADD COLUMN completed_odometer_km double precision;
