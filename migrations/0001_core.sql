-- Core data model: companies, API keys, vehicles with their read model, readings, contacts,
-- service locations and runs. Every tenant-owned row carries company_id.

CREATE TABLE companies (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  external_ids jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Keys are high-entropy random strings, so a SHA-256 digest is enough to store them safely and
-- lets a request find its key with one unique-index lookup.
CREATE TABLE api_keys (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id   uuid NOT NULL REFERENCES companies (id),
  name         text,
  key_prefix   text NOT NULL,
  key_hash     bytea NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_company ON api_keys (company_id);

CREATE TABLE service_locations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id      uuid NOT NULL REFERENCES companies (id),
  name            text,
  street_1        text,
  street_2        text,
  city            text,
  state           text,
  postal_code     text,
  country         text,
  display_address text,
  latitude        double precision,
  longitude       double precision,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_locations_company ON service_locations (company_id);

-- A vehicle row is also its read model: signals, health, link_broken and as_of are maintained by
-- the workers, and updated_at moves only when something a client can see changed.
CREATE TABLE vehicles (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id          uuid NOT NULL REFERENCES companies (id),
  name                text,
  vin                 text,
  license_plate       text,
  make                text,
  model               text,
  year                integer,
  telematics_provider text,
  provider_vehicle_id text,
  home_location_id    uuid REFERENCES service_locations (id),
  active              boolean NOT NULL DEFAULT true,
  signals             jsonb NOT NULL DEFAULT '{}'::jsonb,
  health              jsonb NOT NULL DEFAULT '{"status":"unknown","alerts":[]}'::jsonb,
  link_broken         jsonb,
  as_of               timestamptz,
  -- Time of the provider's latest ECU (not GPS-derived) odometer; it decides whether a manual
  -- odometer write is refused (docs/odometer.md).
  ecu_odometer_at     timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
-- GET /vehicles: active vehicles of one company, newest first, optional updated_since.
CREATE INDEX vehicles_company_updated ON vehicles (company_id, updated_at DESC, id DESC) WHERE active;
CREATE INDEX vehicles_company_vin ON vehicles (company_id, vin);

-- One row per signal sample. Range-partitioned by the sample's own time so old months can be
-- detached or dropped instead of deleted; the primary key makes a repeated sample a no-op.
CREATE TABLE readings (
  vehicle_id  uuid NOT NULL,
  signal      text NOT NULL,
  recorded_at timestamptz NOT NULL,
  value_num   double precision,
  value_json  jsonb,
  source      text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (vehicle_id, signal, recorded_at)
) PARTITION BY RANGE (recorded_at);
CREATE TABLE readings_default PARTITION OF readings DEFAULT;
CREATE INDEX readings_recorded_brin ON readings USING brin (recorded_at);

-- Creates the monthly partitions covering [first_month, first_month + months). A month whose
-- rows already sit in the default partition is skipped with a notice rather than failing.
CREATE FUNCTION ensure_readings_partitions(first_month date, months integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  month_start date;
  created integer := 0;
  partition_name text;
BEGIN
  FOR i IN 0 .. months - 1 LOOP
    month_start := date_trunc('month', first_month)::date + make_interval(months => i);
    partition_name := format('readings_%s', to_char(month_start, 'YYYY_MM'));
    IF to_regclass(partition_name) IS NULL THEN
      BEGIN
        EXECUTE format('CREATE TABLE %I PARTITION OF readings FOR VALUES FROM (%L) TO (%L)',
                       partition_name, month_start, month_start + interval '1 month');
        created := created + 1;
      EXCEPTION WHEN check_violation THEN
        RAISE NOTICE 'partition % skipped: rows for it are in readings_default', partition_name;
      END;
    END IF;
  END LOOP;
  RETURN created;
END $$;

CREATE TABLE contacts (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL REFERENCES companies (id),
  name       text,
  email      text,
  phone      text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX contacts_company_email ON contacts (company_id, lower(email)) WHERE email IS NOT NULL;

CREATE TABLE runs (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id              uuid NOT NULL REFERENCES companies (id),
  vehicle_id              uuid REFERENCES vehicles (id),
  contact_id              uuid REFERENCES contacts (id),
  service_location_id     uuid REFERENCES service_locations (id),
  reference_code          text NOT NULL,
  title                   text,
  description             text,
  status                  text NOT NULL DEFAULT 'open'
                          CHECK (status IN ('open', 'in_progress', 'completed', 'dismissed')),
  scheduling_state        text NOT NULL DEFAULT 'requested'
                          CHECK (scheduling_state IN ('requested', 'proposed', 'confirmed', 'cancelled')),
  preferred_start         timestamptz,
  preferred_end           timestamptz,
  appointment_start       timestamptz,
  appointment_end         timestamptz,
  confirmed_at            timestamptz,
  appointment_time        jsonb,
  customer_requested_time jsonb,
  -- Snapshot of the customer as given with the request: {name, email, phone, address, display_address}.
  customer                jsonb,
  items                   jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(items) = 'array'),
  dispatch_proposal       jsonb,
  completed_at            timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, reference_code)
);
-- GET /runs: newest activity first, optionally by status or scheduling_state, with updated_since.
CREATE INDEX runs_company_updated ON runs (company_id, updated_at DESC, id DESC);
CREATE INDEX runs_company_status_updated ON runs (company_id, status, updated_at DESC, id DESC);
CREATE INDEX runs_company_scheduling_updated ON runs (company_id, scheduling_state, updated_at DESC, id DESC);
-- The fold rule looks up a vehicle's run that is still open.
CREATE INDEX runs_vehicle_open ON runs (vehicle_id) WHERE status IN ('open', 'in_progress');
