-- Replay protection of provider pushes (docs/ingestion.md, "Replays"): the replay key of every push
-- stored within the replay window, per connection. A push whose key is here and younger than the
-- window is a duplicate: it is answered with the first push's inbox row and not stored again.
-- Written by the statement that stores the push, so a push is never remembered without its row.
CREATE TABLE ingest_push_receipts (
  connection_id uuid NOT NULL REFERENCES provider_connections (id),
  -- SHA-256 of the adapter's replay key (an event id, or the body's digest).
  key_digest    bytea NOT NULL,
  received_at   timestamptz NOT NULL,
  inbox_id      bigint NOT NULL,
  PRIMARY KEY (connection_id, key_digest)
);
-- Each stored push removes its connection's receipts older than the window (src/db/push-receipts.ts).
CREATE INDEX ingest_push_receipts_age ON ingest_push_receipts (connection_id, received_at);
