-- Monitoring delivery pipeline (issue 9): which trigger the owed attempt has, and how many of the
-- scheduled attempts (initial + MONITORING_RETRY_DELAYS_MS) are used, so manual and recover
-- attempts never eat into the schedule; retention purges by the subscription's tier.

ALTER TABLE monitoring_deliveries
  -- The trigger of the attempt owed at next_attempt_at: scheduled (initial and retries), manual
  -- (POST /v1/deliveries/:id/retry) or recover (POST /v1/subscriptions/:id/recover).
  ADD COLUMN next_trigger text NOT NULL DEFAULT 'scheduled' CHECK (next_trigger IN ('scheduled', 'manual', 'recover')),
  -- Scheduled attempts made (worker_lost ones included): at most 1 + the number of retry delays.
  ADD COLUMN scheduled_attempts integer NOT NULL DEFAULT 0;

-- The recovery sweep looks for sends whose worker died.
CREATE INDEX monitoring_deliveries_sending ON monitoring_deliveries (sending_since) WHERE sending_since IS NOT NULL;
