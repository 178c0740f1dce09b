-- Samples and provider events stored by a refresh that asked for no cascade (spec/000
-- VehicleRefreshRequest: downstream processing does not run because of it). The health stage
-- feeds them to the link rule (the vehicle state) but never to the alert rules or the monitoring
-- detectors, whichever evaluation reads them first: one with cascade (a push's, the sweep's) or the
-- refresh's own (src/health/evaluate-vehicles.ts). Marked per row rather than per transaction, so
-- an ingest batch that holds a push and a refresh of one vehicle keeps them apart.
--
-- true or NULL, never false: a row with a NULL needs no space (both tables' rows carry a null
-- bitmap in the header's padding), and adding a column without a default is a catalog change,
-- no rewrite of either table.
ALTER TABLE readings ADD COLUMN without_cascade boolean;
ALTER TABLE vehicle_events ADD COLUMN without_cascade boolean;
