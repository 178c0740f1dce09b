-- Developer console, second round (DESIGN §12): user roles, and the company's audit log.

-- Admins manage the team; developers do everything else. Every user before roles existed was
-- made by the operator to run the company's console, so they all become admins; a new user's
-- role is always chosen by whoever creates them (no default).
ALTER TABLE console_users ADD COLUMN role text NOT NULL DEFAULT 'admin'
  CONSTRAINT console_users_role CHECK (role IN ('admin', 'developer'));
ALTER TABLE console_users ALTER COLUMN role DROP DEFAULT;

-- One row per change a company's people or API keys make (keys, subscriptions, users, sign-ins),
-- written in the transaction of the change itself, so a change and its row commit together.
-- Kept 365 days (maintenance.purge-expired).
CREATE TABLE audit_events (
  -- Increasing in insertion order: the page cursor (newest first), stable while rows are added.
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id  uuid NOT NULL REFERENCES companies (id),
  actor_kind  text NOT NULL CONSTRAINT audit_events_actor_kind CHECK (actor_kind IN ('user', 'api_key')),
  -- The user's or key's id; kept as written even after the user is disabled or the key revoked.
  actor_id    uuid NOT NULL,
  -- What the log shows for the actor at the time: the user's email or the key's prefix.
  actor_label text NOT NULL,
  -- A dotted verb: api_key.created, user.invited, sign_in.failed (src/audit/actions.ts).
  action      text NOT NULL,
  target_type text NOT NULL,
  target_id   text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_company_page ON audit_events (company_id, id DESC);
-- The retention purge reads the oldest rows first.
CREATE INDEX audit_events_occurred ON audit_events (occurred_at);
