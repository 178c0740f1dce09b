-- Core deliveries are sent in lanes, one per subscription: a lane turn claims its subscription's
-- oldest pending deliveries just as their sends start (so `claimed_at` is when the send started).

-- A lane claims without reading its subscription's delivered history.
CREATE INDEX webhook_deliveries_lane ON webhook_deliveries (subscription_id, created_at) WHERE status = 'pending';
