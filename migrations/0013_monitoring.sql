-- Monitoring (spec/001, DESIGN §11): geofences, subscriptions with their detectors' state, the
-- events detected, their deliveries (at most 4 attempts) and each attempt.

CREATE TABLE geofences (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL REFERENCES companies (id),
  name       text NOT NULL,
  -- GeoJSON Polygon ([lon, lat] rings) or {type: "Circle", center: {lat, lon}, radius_m}.
  area       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX geofences_company ON geofences (company_id, created_at) WHERE deleted_at IS NULL;

CREATE TABLE monitoring_subscriptions (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id        uuid NOT NULL REFERENCES companies (id),
  vehicle_id        uuid NOT NULL REFERENCES vehicles (id),
  webhook_url       text NOT NULL,
  -- Canonical kinds (aliases resolved), each covered by the tier.
  events            text[] NOT NULL,
  tier              text NOT NULL CHECK (tier IN ('basic', 'standard', 'premium')),
  -- As answered: speed_limit_kph, idle_minutes, mileage_threshold_miles, fuel_level_percent, geofence_ids.
  options           jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- AES-256-GCM (SECRETS_KEY) of the signing secret, shown once at creation.
  secret_ciphertext bytea NOT NULL,
  -- Each detector's state by kind, advanced by every evaluation of the vehicle.
  detector_state    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at        timestamptz NOT NULL DEFAULT now(),
  -- Set by DELETE; the row stays for metering (a vehicle is billed for every month it was monitored).
  deleted_at        timestamptz
);
CREATE INDEX monitoring_subscriptions_vehicle ON monitoring_subscriptions (vehicle_id) WHERE deleted_at IS NULL;
CREATE INDEX monitoring_subscriptions_company ON monitoring_subscriptions (company_id, created_at DESC);

-- One row per detection; `id` is the event_id, the same on every attempt.
CREATE TABLE monitoring_events (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  subscription_id uuid NOT NULL REFERENCES monitoring_subscriptions (id),
  company_id      uuid NOT NULL REFERENCES companies (id),
  vehicle_id      uuid NOT NULL REFERENCES vehicles (id),
  kind            text NOT NULL,
  episode_key     text NOT NULL,
  severity        text NOT NULL,
  -- When the triggering reading was taken, and when the event was detected.
  occurred_at     timestamptz NOT NULL,
  detected_at     timestamptz NOT NULL,
  -- The exact JSON bytes signed and sent on every attempt.
  body            text NOT NULL
);
CREATE INDEX monitoring_events_subscription ON monitoring_events (subscription_id, detected_at DESC);
CREATE INDEX monitoring_events_detected ON monitoring_events (detected_at);

CREATE TABLE monitoring_deliveries (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  event_id        uuid NOT NULL UNIQUE REFERENCES monitoring_events (id) ON DELETE CASCADE,
  subscription_id uuid NOT NULL REFERENCES monitoring_subscriptions (id),
  company_id      uuid NOT NULL REFERENCES companies (id),
  -- pending: first attempt owed; retrying: an attempt failed and another is scheduled;
  -- succeeded: a 2xx; failed: the last scheduled attempt failed.
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed')),
  attempts_made   integer NOT NULL DEFAULT 0,
  -- When the next scheduled attempt is due; null when none is owed.
  next_attempt_at timestamptz,
  -- Set when an attempt's send starts (the claim); cleared when it is recorded. A value older than
  -- the attempt deadline means the worker died mid-send.
  sending_since   timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  completed_at    timestamptz
);
CREATE INDEX monitoring_deliveries_due ON monitoring_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX monitoring_deliveries_subscription ON monitoring_deliveries (subscription_id, created_at DESC);
CREATE INDEX monitoring_deliveries_created ON monitoring_deliveries (created_at);

CREATE TABLE monitoring_attempts (
  delivery_id    uuid NOT NULL REFERENCES monitoring_deliveries (id) ON DELETE CASCADE,
  attempt_number integer NOT NULL,
  -- scheduled (initial and the retries), manual (POST /v1/deliveries/:id/retry), recover, worker_lost.
  trigger        text NOT NULL CHECK (trigger IN ('scheduled', 'manual', 'recover', 'worker_lost')),
  started_at     timestamptz NOT NULL,
  duration_ms    integer NOT NULL,
  status_code    integer,
  error          text,
  PRIMARY KEY (delivery_id, attempt_number)
);
