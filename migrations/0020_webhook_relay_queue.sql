-- The relay's to-do list of outbox events, apart from the events themselves. Marking an event
-- relayed by updating its row rewrote the whole row, WebhookRun payload included (~1.5 KB: a new
-- tuple, its WAL and its index entries), once per event; deleting a narrow queue row costs a
-- fraction of that (docs/performance.md "Webhook delivery").
--
-- A statement trigger queues every inserted event, whichever code wrote it: during a rolling
-- deploy the processes still on the previous release keep writing events and they are relayed
-- (their relay passes fail on the dropped column until they are replaced; the new ones relay
-- everything). No foreign key: the queue row is written by the event's own statement, and the
-- purge keeps queued events (a key would make each purged event scan the queue).
CREATE TABLE webhook_relay_queue (
  event_id    uuid NOT NULL,
  occurred_at timestamptz NOT NULL
);
CREATE INDEX webhook_relay_queue_order ON webhook_relay_queue (occurred_at);

CREATE FUNCTION queue_webhook_events_for_relay() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_relay_queue (event_id, occurred_at) SELECT id, occurred_at FROM inserted;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_events_queue_for_relay AFTER INSERT ON webhook_events
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION queue_webhook_events_for_relay();

INSERT INTO webhook_relay_queue (event_id, occurred_at)
SELECT id, occurred_at FROM webhook_events WHERE relayed_at IS NULL;

-- A delivery's created_at says when its event was relayed. Both drops are catalog changes.
DROP INDEX webhook_events_unrelayed;
ALTER TABLE webhook_events DROP COLUMN relayed_at;

-- WEBHOOK_RETENTION_DAYS purges events by age; events arrive in time order, so a BRIN index (a
-- few pages, next to nothing per insert) finds the old ones. Building it reads the events table
-- once while writes to it wait: on a large outbox, apply this release in a quiet moment.
CREATE INDEX webhook_events_occurred ON webhook_events USING brin (occurred_at);
