-- Run events (transactional outbox), webhook subscriptions, deliveries and their attempts; the
-- dispatch roster; company settings.

ALTER TABLE companies ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Every run event, written in the transaction of the change it reports; `id` is the event_id
-- receivers deduplicate on. `payload` is the WebhookRun as it was at that moment.
CREATE TABLE webhook_events (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id      uuid NOT NULL REFERENCES companies (id),
  run_id          uuid REFERENCES runs (id),
  kind            text NOT NULL,
  payload         jsonb NOT NULL,
  occurred_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- webhook.test only: the one subscription it is for.
  subscription_id uuid,
  -- Set when the relay has created this event's deliveries; null rows are owed relaying.
  relayed_at      timestamptz
);
CREATE INDEX webhook_events_unrelayed ON webhook_events (occurred_at) WHERE relayed_at IS NULL;
CREATE INDEX webhook_events_run ON webhook_events (run_id, occurred_at);

CREATE TABLE webhook_subscriptions (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id        uuid NOT NULL REFERENCES companies (id),
  url               text NOT NULL,
  events            text[] NOT NULL,
  -- AES-256-GCM (SECRETS_KEY) of the signing secret, shown once at creation.
  secret_ciphertext bytea NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  deleted_at        timestamptz
);
CREATE INDEX webhook_subscriptions_company ON webhook_subscriptions (company_id) WHERE deleted_at IS NULL;
ALTER TABLE webhook_events ADD FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions (id);

-- One delivery per (event, subscription): the unique key makes the relay idempotent.
CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  event_id        uuid NOT NULL REFERENCES webhook_events (id),
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id),
  company_id      uuid NOT NULL REFERENCES companies (id),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'succeeded', 'failed')),
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- When a worker took it for its attempt (status sending).
  claimed_at      timestamptz,
  completed_at    timestamptz,
  UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at DESC);
CREATE INDEX webhook_deliveries_open ON webhook_deliveries (created_at) WHERE status IN ('pending', 'sending');

CREATE TABLE webhook_attempts (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  delivery_id        uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempt_number     integer NOT NULL,
  trigger            text NOT NULL CHECK (trigger IN ('scheduled', 'manual', 'recovery')),
  url                text NOT NULL,
  started_at         timestamptz NOT NULL,
  duration_ms        integer NOT NULL,
  response_status    integer,
  response_excerpt   text,
  response_truncated boolean NOT NULL DEFAULT false,
  error_code         text,
  error_message      text,
  resolved_ip        text,
  UNIQUE (delivery_id, attempt_number)
);

-- Shops and technicians the dispatch assistant may propose for new runs.
CREATE TABLE dispatch_roster (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id uuid NOT NULL REFERENCES companies (id),
  type       text NOT NULL CHECK (type IN ('shop', 'technician')),
  name       text NOT NULL,
  skills     text[] NOT NULL DEFAULT '{}',
  latitude   double precision,
  longitude  double precision,
  capacity   integer NOT NULL DEFAULT 5 CHECK (capacity > 0),
  active     boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dispatch_roster_company ON dispatch_roster (company_id) WHERE active;
