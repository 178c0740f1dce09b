-- The health evaluation writes its events and its state rows without foreign-key checks
-- (docs/decisions.md "Performance (issue 20)"). Each check is a per-row lookup and row lock of the
-- referenced row: the first sweep of 100,000 vehicles made about 360,000 of them (two per health
-- event, one per new state row), every page of one company's vehicles locking the same company
-- row. Integrity holds by construction: both tables are written only by the health evaluation
-- (db/health.ts `saveHealth`), for vehicles it holds locked in the same transaction, with the
-- company read from that vehicle row; vehicles and companies are never deleted (a vehicle is
-- deactivated).
ALTER TABLE health_events DROP CONSTRAINT health_events_company_id_fkey;
ALTER TABLE health_events DROP CONSTRAINT health_events_vehicle_id_fkey;
ALTER TABLE vehicle_health_state DROP CONSTRAINT vehicle_health_state_vehicle_id_fkey;
