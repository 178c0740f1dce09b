-- Service requests fold into a vehicle's open run, so a vehicle has at most one run that is open
-- or in progress; reopening a run while another is open is refused (409) and this index backs it.
DROP INDEX runs_vehicle_open;
CREATE UNIQUE INDEX runs_vehicle_open ON runs (vehicle_id) WHERE status IN ('open', 'in_progress');
