-- Health events are written without foreign-key checks (docs/decisions.md "Performance (issue
-- 20)"). Each check was a per-row lookup and row lock of the vehicle and of the company: about
-- 260,000 of them in the first sweep of 100,000 vehicles, every page of one company's vehicles
-- locking the same company row. Integrity holds by construction: events are written only by the
-- health evaluation (db/health.ts `saveHealth`), for vehicles it holds locked in the same
-- transaction, with the company read from that vehicle row; vehicles and companies are never
-- deleted (deactivated vehicles stay).
ALTER TABLE health_events DROP CONSTRAINT health_events_company_id_fkey;
ALTER TABLE health_events DROP CONSTRAINT health_events_vehicle_id_fkey;
