-- When a vehicle's health can next change by time alone (docs/health.md "The sweep"): the
-- earliest time its rules name (a timer completing, a due date reached), null when none does.
-- The sweep passes over a vehicle until then unless it has samples not yet fed, a live monitoring
-- subscription, no state, or its turn of the hourly full evaluation. Rows evaluated before this
-- column get the epoch (at the next sweep), as do the vehicles of a company whose overrides change.
ALTER TABLE vehicle_health_state ADD COLUMN recheck_at timestamptz DEFAULT 'epoch';
ALTER TABLE vehicle_health_state ALTER COLUMN recheck_at DROP DEFAULT;
