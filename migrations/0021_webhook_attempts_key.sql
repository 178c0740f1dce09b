-- An attempt is identified by its delivery and number; nothing refers to its own uuid. Dropping
-- it saves, per attempt, a random uuid and an insert into a btree of random keys (the costliest
-- index insert once the index outgrows memory). The pair becomes the primary key (its index is
-- built once, here).
ALTER TABLE webhook_attempts DROP COLUMN id;
ALTER TABLE webhook_attempts
  DROP CONSTRAINT webhook_attempts_delivery_id_attempt_number_key,
  ADD PRIMARY KEY (delivery_id, attempt_number);
