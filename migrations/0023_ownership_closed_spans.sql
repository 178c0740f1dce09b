-- The ownership boundary (DESIGN §11, docs/ownership.md): the read functions ask, for every latest
-- sample and health window they keep, whether the vehicle changed hands after it was taken. Only
-- closed spans answer that, and most vehicles have none: this index holds just those, so the
-- question is one probe of a small index (index-only), whatever the number of vehicles.
CREATE INDEX vehicle_ownerships_closed ON vehicle_ownerships (vehicle_id, ended_at) WHERE ended_at IS NOT NULL;
