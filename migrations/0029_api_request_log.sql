-- Developer console "Requests" (DESIGN §12): every public-API request made with a company's key,
-- kept 7 days. Only what a developer needs to find a misbehaving integration is kept: when, the
-- method, the path (query values dropped), the status, the duration and the key. Bodies,
-- headers and query strings never reach this table.
--
-- Range-partitioned by day, so retention drops whole days (maintenance.ensure-partitions) instead
-- of deleting rows from a write-heavy table. No default partition: a row for a day without one is
-- refused and counted as dropped by the recorder (src/request-log/recorder.ts) rather than left
-- where no drop would reach it; partitions are made a week ahead.
CREATE TABLE api_request_log (
  -- Orders rows of the same millisecond, so a page cursor (requested_at, id) is exact.
  id           bigint GENERATED ALWAYS AS IDENTITY,
  company_id   uuid NOT NULL,
  requested_at timestamptz NOT NULL,
  method       text NOT NULL,
  -- The path as requested, ids included, without its query string.
  path         text NOT NULL,
  status       smallint NOT NULL,
  duration_ms  real NOT NULL,
  api_key_id   uuid NOT NULL,
  key_prefix   text NOT NULL
) PARTITION BY RANGE (requested_at);
CREATE INDEX api_request_log_company_page ON api_request_log (company_id, requested_at DESC, id DESC);
CREATE INDEX api_request_log_company_key ON api_request_log (company_id, api_key_id, requested_at DESC, id DESC);

-- Creates the daily partitions (UTC days) covering [first_day, first_day + days).
CREATE FUNCTION ensure_api_request_log_partitions(first_day date, days integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  day_start date;
  created integer := 0;
  partition_name text;
BEGIN
  FOR i IN 0 .. days - 1 LOOP
    day_start := first_day + i;
    partition_name := format('api_request_log_%s', to_char(day_start, 'YYYY_MM_DD'));
    IF to_regclass(partition_name) IS NULL THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF api_request_log FOR VALUES FROM (%L) TO (%L)',
                     partition_name, day_start::timestamp AT TIME ZONE 'UTC',
                     (day_start + 1)::timestamp AT TIME ZONE 'UTC');
      created := created + 1;
    END IF;
  END LOOP;
  RETURN created;
END $$;
