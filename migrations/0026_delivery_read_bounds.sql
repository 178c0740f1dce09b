-- Bounded delivery work (issue 16): manual retries of a monitoring delivery are limited, and
-- endpoint health reads only a subscription's recent attempts, through an index.

-- A delivery's manual retries (POST /v1/deliveries/:id/retry, and recover, one per delivery it
-- queues): how many in all, and when those of the last hour were accepted (trimmed on each one,
-- so it holds at most MONITORING_MANUAL_RETRIES_PER_HOUR times). Constant defaults: catalog
-- changes, no rewrite.
ALTER TABLE monitoring_deliveries
  ADD COLUMN manual_retries integer NOT NULL DEFAULT 0,
  ADD COLUMN manual_retried_at timestamptz[] NOT NULL DEFAULT '{}';

-- The attempt's subscription, so that endpoint health finds a subscription's newest attempts
-- without reading every delivery it ever had. Nullable: processes still on the previous release
-- during a rolling deploy record attempts without it, and those stay out of endpoint health.
ALTER TABLE monitoring_attempts ADD COLUMN subscription_id uuid;

-- Endpoint health covers the last 24 hours: those attempts get their subscription now, older
-- ones never need it. This reads the attempts table once while its writes wait, as does the index
-- build: on a large attempts table, apply this release in a quiet moment.
UPDATE monitoring_attempts a SET subscription_id = d.subscription_id
FROM monitoring_deliveries d
WHERE d.id = a.delivery_id AND a.started_at > now() - interval '24 hours';

-- Partial: the attempts from before this release (no subscription) take no room in it.
CREATE INDEX monitoring_attempts_subscription_recent ON monitoring_attempts (subscription_id, started_at DESC)
  WHERE subscription_id IS NOT NULL;
