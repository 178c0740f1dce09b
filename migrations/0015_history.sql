-- History report (spec/001, DESIGN §11): who held each vehicle when, and the rollups the report
-- reads instead of raw readings (docs/history-report.md). Rollups are advanced at ingest from the
-- readings and events a batch actually stored, so a repeated payload adds nothing.

-- One row per span a company held a vehicle; the open span (ended_at null) is the current owner.
CREATE TABLE vehicle_ownerships (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  vehicle_id uuid NOT NULL REFERENCES vehicles (id),
  company_id uuid NOT NULL REFERENCES companies (id),
  started_at timestamptz NOT NULL,
  ended_at   timestamptz,
  CHECK (ended_at IS NULL OR ended_at >= started_at)
);
CREATE UNIQUE INDEX vehicle_ownerships_current ON vehicle_ownerships (vehicle_id) WHERE ended_at IS NULL;
CREATE INDEX vehicle_ownerships_vehicle ON vehicle_ownerships (vehicle_id, started_at);
INSERT INTO vehicle_ownerships (vehicle_id, company_id, started_at)
  SELECT id, company_id, created_at FROM vehicles;

-- A report looks a VIN up across every company's vehicles.
CREATE INDEX vehicles_vin ON vehicles (vin) WHERE vin IS NOT NULL;

-- Odometer checkpoints: per vehicle, UTC day, odometer signal and source, the day's first, last,
-- lowest and highest reading. About 365 rows per vehicle-year instead of every reading.
CREATE TABLE odometer_daily (
  vehicle_id uuid NOT NULL REFERENCES vehicles (id),
  day        date NOT NULL,
  signal     text NOT NULL,
  source     text NOT NULL,
  first_at   timestamptz NOT NULL,
  first_km   double precision NOT NULL,
  last_at    timestamptz NOT NULL,
  last_km    double precision NOT NULL,
  min_km     double precision NOT NULL,
  max_km     double precision NOT NULL,
  readings   integer NOT NULL,
  PRIMARY KEY (vehicle_id, day, signal, source)
);

-- Driving per vehicle and UTC day: speed samples (moving, at highway speed, the sum of moving
-- speeds), trips started, and the provider's harsh driving events.
CREATE TABLE driving_daily (
  vehicle_id      uuid NOT NULL REFERENCES vehicles (id),
  day             date NOT NULL,
  speed_samples   integer NOT NULL DEFAULT 0,
  moving_samples  integer NOT NULL DEFAULT 0,
  highway_samples integer NOT NULL DEFAULT 0,
  moving_kph_sum  double precision NOT NULL DEFAULT 0,
  trips           integer NOT NULL DEFAULT 0,
  hard_brakes     integer NOT NULL DEFAULT 0,
  hard_accels     integer NOT NULL DEFAULT 0,
  PRIMARY KEY (vehicle_id, day)
);

-- Rollups of what is already stored, with the same definitions as the ingest statements
-- (src/db/history-rollups.ts).
INSERT INTO odometer_daily (vehicle_id, day, signal, source, first_at, first_km, last_at, last_km, min_km, max_km, readings)
  SELECT vehicle_id, (recorded_at AT TIME ZONE 'UTC')::date, signal, source,
         min(recorded_at), (array_agg(value_num ORDER BY recorded_at))[1],
         max(recorded_at), (array_agg(value_num ORDER BY recorded_at DESC))[1],
         min(value_num), max(value_num), count(*)
  FROM readings
  WHERE signal IN ('odometer_km', 'gps_odometer_km') AND value_num IS NOT NULL
  GROUP BY 1, 2, 3, 4;

INSERT INTO driving_daily (vehicle_id, day, speed_samples, moving_samples, highway_samples, moving_kph_sum, trips)
  SELECT vehicle_id, day, sum(speed_samples), sum(moving_samples), sum(highway_samples), sum(moving_kph_sum), sum(trips)
  FROM (
    SELECT vehicle_id, (recorded_at AT TIME ZONE 'UTC')::date AS day, count(*) AS speed_samples,
           count(*) FILTER (WHERE value_num >= 8) AS moving_samples,
           count(*) FILTER (WHERE value_num >= 88) AS highway_samples,
           coalesce(sum(value_num) FILTER (WHERE value_num >= 8), 0) AS moving_kph_sum, 0 AS trips
    FROM readings WHERE signal = 'speed_kph' AND value_num >= 0
    GROUP BY 1, 2
    UNION ALL
    SELECT vehicle_id, (recorded_at AT TIME ZONE 'UTC')::date, 0, 0, 0, 0, count(*)
    FROM (
      SELECT vehicle_id, recorded_at, value_json #>> '{}' AS state,
             lag(value_json #>> '{}') OVER (PARTITION BY vehicle_id ORDER BY recorded_at) AS previous
      FROM readings WHERE signal = 'engine_state'
    ) s
    WHERE state IN ('on', 'idle') AND (previous IS NULL OR previous = 'off')
    GROUP BY 1, 2
  ) parts
  GROUP BY 1, 2;

INSERT INTO driving_daily AS d (vehicle_id, day, hard_brakes, hard_accels)
  SELECT vehicle_id, (recorded_at AT TIME ZONE 'UTC')::date,
         count(*) FILTER (WHERE kind = 'hard_brake'), count(*) FILTER (WHERE kind = 'hard_accel')
  FROM vehicle_events WHERE kind IN ('hard_brake', 'hard_accel')
  GROUP BY 1, 2
  ON CONFLICT (vehicle_id, day) DO UPDATE SET hard_brakes = excluded.hard_brakes, hard_accels = excluded.hard_accels;
