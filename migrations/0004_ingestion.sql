-- Ingestion: provider connections, the durable push/pull inbox, the latest state per signal,
-- provider events and the count of samples for vehicles that are not mapped yet.

CREATE TABLE provider_connections (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id        uuid NOT NULL REFERENCES companies (id),
  provider          text NOT NULL
                    CHECK (provider IN ('samsara', 'geotab', 'motive', 'smartcar', 'traccar', 'generic', 'simulator')),
  name              text,
  -- AES-256-GCM (SECRETS_KEY) of the JSON config: webhook secret (for Traccar the device token
  -- its ingest URL carries), API token, base URL, Geotab login.
  config_ciphertext bytea NOT NULL,
  -- Provider feed position, advanced only in the transaction that stores the page it came with.
  pull_cursor       text,
  pull_interval_seconds integer NOT NULL DEFAULT 60 CHECK (pull_interval_seconds >= 5),
  next_pull_at      timestamptz,
  last_pull_at      timestamptz,
  last_pull_error   text,
  active            boolean NOT NULL DEFAULT true,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX provider_connections_company ON provider_connections (company_id);

ALTER TABLE vehicles ADD COLUMN provider_connection_id uuid REFERENCES provider_connections (id);
-- Samples name their vehicle by (connection, provider_vehicle_id); one vehicle per such pair.
CREATE UNIQUE INDEX vehicles_connection_provider_vehicle ON vehicles (provider_connection_id, provider_vehicle_id)
  WHERE provider_connection_id IS NOT NULL AND provider_vehicle_id IS NOT NULL;

-- Every accepted push and every pulled page, byte for byte, before anything else happens to it.
-- A row without processed_at is work still owed; workers re-enqueue such rows on start.
CREATE TABLE ingest_inbox (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  connection_id   uuid NOT NULL REFERENCES provider_connections (id),
  provider        text NOT NULL,
  received_at     timestamptz NOT NULL DEFAULT now(),
  content_type    text,
  payload         text NOT NULL,
  -- false when a refresh asked to stop after the vehicle state (no health or runs stage).
  cascade         boolean NOT NULL DEFAULT true,
  refresh_id      uuid,
  processed_at    timestamptz,
  samples_count   integer,
  skipped_count   integer,
  unmapped_count  integer,
  error           text
);
CREATE INDEX ingest_inbox_pending ON ingest_inbox (id) WHERE processed_at IS NULL;
CREATE INDEX ingest_inbox_received ON ingest_inbox (received_at, provider);

-- Newest sample per vehicle and signal; the vehicle read model's `signals` is built from it.
CREATE TABLE vehicle_signals (
  vehicle_id  uuid NOT NULL REFERENCES vehicles (id),
  signal      text NOT NULL,
  recorded_at timestamptz NOT NULL,
  value       jsonb NOT NULL,
  source      text NOT NULL,
  PRIMARY KEY (vehicle_id, signal)
);

CREATE TABLE vehicle_events (
  vehicle_id  uuid NOT NULL REFERENCES vehicles (id),
  kind        text NOT NULL,
  recorded_at timestamptz NOT NULL,
  g           double precision,
  source      text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (vehicle_id, kind, recorded_at)
);

-- Samples for provider vehicle ids no vehicle is mapped to: kept in the inbox, counted here so an
-- operator sees them, and replayable once the vehicle is added.
CREATE TABLE unmapped_vehicles (
  connection_id       uuid NOT NULL REFERENCES provider_connections (id),
  provider_vehicle_id text NOT NULL,
  first_seen_at       timestamptz NOT NULL,
  last_seen_at        timestamptz NOT NULL,
  samples_count       bigint NOT NULL,
  PRIMARY KEY (connection_id, provider_vehicle_id)
);

-- Timestamps inside JSON documents, written as JavaScript writes them (2026-05-04T14:02:11.000Z).
CREATE FUNCTION iso_utc(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- The read model's `signals` object from the vehicle's latest samples. Objects get their own
-- as_of; the odometer is the newest of the ECU (or manual) and GPS-derived series, with its
-- source; every signal's time is listed under observed_at.
CREATE FUNCTION vehicle_signals_json(target uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  WITH latest AS (
    SELECT signal, value, iso_utc(recorded_at) AS recorded_at, source, recorded_at AS sort_at
    FROM vehicle_signals WHERE vehicle_id = target
  ), odometer AS (
    SELECT jsonb_build_object('km', value, 'as_of', recorded_at, 'source', source) AS value
    FROM latest WHERE signal IN ('odometer_km', 'gps_odometer_km')
    ORDER BY sort_at DESC, signal LIMIT 1
  )
  SELECT coalesce(jsonb_object_agg(signal,
           CASE WHEN jsonb_typeof(value) = 'object' THEN value || jsonb_build_object('as_of', recorded_at) ELSE value END)
           FILTER (WHERE signal NOT IN ('odometer_km', 'gps_odometer_km')), '{}'::jsonb)
         || coalesce((SELECT jsonb_build_object('odometer', value) FROM odometer), '{}'::jsonb)
         || jsonb_build_object('observed_at', coalesce(jsonb_object_agg(signal, recorded_at), '{}'::jsonb))
  FROM latest
$$;
