-- Developer console, second round (DESIGN §12): cursor paging of webhook subscriptions and of
-- deliveries, and the operator as an actor of the audit log.

-- A page of deliveries (newest first) starts right after its cursor row, found by (created_at,
-- id): with the id in the index, a page deep in a long history is one range scan, not a walk
-- from the newest. These replace the (subscription_id, created_at) indexes, which they cover.
-- Each build reads its table while the table's writes wait: apply this release in a quiet moment.
CREATE INDEX webhook_deliveries_subscription_page ON webhook_deliveries (subscription_id, created_at DESC, id DESC);
DROP INDEX webhook_deliveries_subscription;
CREATE INDEX monitoring_deliveries_subscription_page ON monitoring_deliveries (subscription_id, created_at DESC, id DESC);
DROP INDEX monitoring_deliveries_subscription;
CREATE INDEX webhook_subscriptions_company_page ON webhook_subscriptions (company_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;
DROP INDEX webhook_subscriptions_company;

-- The operator (the operator API's bearer token, docs/operator-api.md) changes a user's role
-- too; the log says so. The operator has no id of its own: its rows carry none.
ALTER TABLE audit_events ALTER COLUMN actor_id DROP NOT NULL;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_kind;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_kind
  CHECK (actor_kind IN ('user', 'api_key', 'operator') AND (actor_id IS NULL) = (actor_kind = 'operator'));
