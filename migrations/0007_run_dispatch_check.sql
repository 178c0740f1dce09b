-- When the dispatch assistant looked at a run (with or without a proposal). A sweep finds new runs
-- it has not looked at yet, so a dispatch request lost with Redis is made up for.
ALTER TABLE runs ADD COLUMN dispatch_checked_at timestamptz;
-- Runs from before the assistant existed are not new: nothing to propose for them.
UPDATE runs SET dispatch_checked_at = created_at;
CREATE INDEX runs_dispatch_unchecked ON runs (created_at) WHERE dispatch_checked_at IS NULL;
