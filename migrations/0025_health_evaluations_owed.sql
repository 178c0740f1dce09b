-- Health evaluations owed by committed ingest transactions. An ingest transaction that changes
-- vehicles records, in the same transaction as their readings, which vehicles it owes an
-- evaluation and with which cascade flag. After the commit the ingest job enqueues them and
-- deletes the row; a row left behind (the process died between the commit and the enqueue, or
-- Redis was away) is enqueued by the `health.relay` job within seconds, not by the 15-minute
-- sweep (docs/ingestion.md "Crashes").
--
-- One row per transaction, its vehicles in two arrays (one per cascade flag): one insert and one
-- delete by key per batch, however many vehicles and samples it holds. No foreign key: vehicles
-- are deactivated, never deleted, and an evaluation of an inactive vehicle does nothing.
CREATE TABLE health_evaluations_owed (
  id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owed_at                timestamptz NOT NULL DEFAULT clock_timestamp(),
  cascade_vehicle_ids    uuid[] NOT NULL,
  no_cascade_vehicle_ids uuid[] NOT NULL
);
