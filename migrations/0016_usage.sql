-- Usage and pricing (spec/001 Limits, DESIGN §11; docs/pricing.md): the ledger of billed requests
-- and the idempotency store of the paid calls.

-- One row per billed report or verification: the list price at the time, the UTC month it counts
-- in, and the request it answered. Discounts are not stored: they depend on the month's count and
-- are computed when the month is priced (src/usage/pricing.ts).
CREATE TABLE usage_ledger (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id        uuid NOT NULL REFERENCES companies (id),
  product           text NOT NULL CHECK (product IN ('history_report', 'verification')),
  -- Report tier or verification level.
  tier              text NOT NULL,
  unit_price_micros bigint NOT NULL CHECK (unit_price_micros >= 0),
  -- The request id: a request is billed once.
  request_key       text NOT NULL,
  -- The Idempotency-Key the request came with, if any (for support; billing once is the claim's job).
  idempotency_key   text,
  -- First day of the UTC month of billed_at.
  month             date NOT NULL,
  billed_at         timestamptz NOT NULL,
  UNIQUE (company_id, product, request_key)
);
CREATE INDEX usage_ledger_month ON usage_ledger (company_id, month, product, billed_at, id);

-- The answer of a paid call made with an Idempotency-Key, kept 24 hours per (company, endpoint,
-- key): a retry gets the same status, type and bytes. `completed_at` null means the first request
-- is still running (a concurrent duplicate answers 409); a failed first request deletes its row.
CREATE TABLE idempotency_keys (
  company_id      uuid NOT NULL REFERENCES companies (id),
  endpoint        text NOT NULL,
  key             text NOT NULL,
  -- SHA-256 of what decides the answer (the body and the format): the same key with another
  -- request is refused.
  request_hash    text NOT NULL,
  claimed_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  status_code     integer,
  content_type    text,
  body            bytea,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (company_id, endpoint, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
