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
-- The ingest worker rewrites a vehicle's read model with every batch; free page space lets a
-- rewrite that leaves updated_at alone stay HOT (no index writes).
ALTER TABLE vehicles SET (fillfactor = 70);
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
  -- lz4: payloads compress about 15:1, and pglz (the default) costs several times the CPU.
  payload         text COMPRESSION lz4 NOT NULL,
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
-- Rows are rewritten constantly: free space per page lets those updates stay HOT (no index churn).
CREATE TABLE vehicle_signals (
  vehicle_id       uuid NOT NULL REFERENCES vehicles (id),
  signal           text NOT NULL,
  recorded_at      timestamptz NOT NULL,
  value            jsonb NOT NULL,
  source           text NOT NULL,
  -- When the value last changed (a repeated value only moves recorded_at).
  value_changed_at timestamptz NOT NULL,
  PRIMARY KEY (vehicle_id, signal)
) WITH (fillfactor = 70);

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
