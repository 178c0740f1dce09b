-- An attempt is identified by its delivery and number (the existing unique key, both columns not
-- null); nothing refers to its own uuid. Dropping it saves, per attempt, a random uuid and an
-- insert into a btree of random keys (the costliest index insert once the index outgrows
-- memory). A catalog change: no rewrite, no index build.
ALTER TABLE webhook_attempts DROP COLUMN id;
