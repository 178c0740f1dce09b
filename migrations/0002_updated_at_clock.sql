-- updated_at is the updated_since cursor. now() is the transaction's start, so a write that waited
-- on a lock could commit with a time older than rows already visible to pollers; the statement
-- clock (clock_timestamp) narrows that window to the commit itself (docs/api.md, polling).
ALTER TABLE vehicles ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
ALTER TABLE runs ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
