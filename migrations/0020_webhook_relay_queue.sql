-- The relay's to-do list of outbox events, apart from the events themselves. Marking an event
-- relayed by updating its row rewrote the whole row, WebhookRun payload included (~1.5 KB: a new
-- tuple, its WAL and its index entries), once per event; deleting a narrow queue row costs a
-- fraction of that (docs/performance.md "Webhook delivery").
CREATE TABLE webhook_relay_queue (
  event_id    uuid NOT NULL REFERENCES webhook_events (id),
  occurred_at timestamptz NOT NULL
);
CREATE INDEX webhook_relay_queue_order ON webhook_relay_queue (occurred_at);

INSERT INTO webhook_relay_queue (event_id, occurred_at)
SELECT id, occurred_at FROM webhook_events WHERE relayed_at IS NULL;

-- A delivery's created_at says when its event was relayed.
DROP INDEX webhook_events_unrelayed;
ALTER TABLE webhook_events DROP COLUMN relayed_at;

-- WEBHOOK_RETENTION_DAYS purges events by age; events arrive in time order, so a BRIN index (a
-- few pages, next to nothing per insert) finds the old ones.
CREATE INDEX webhook_events_occurred ON webhook_events USING brin (occurred_at);
