-- Vertices per geofence (issue 16), kept by Postgres from the area itself, so the per-company cap
-- (GEOFENCE_VERTICES_PER_COMPANY) is a sum over the company's live fences, whoever wrote them.
-- A polygon counts every position of every ring; a circle counts 1 (its tests cost one edge's).
CREATE FUNCTION geofence_vertex_count(area jsonb) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE
    WHEN area ->> 'type' = 'Polygon'
      THEN (SELECT coalesce(sum(jsonb_array_length(ring)), 0)::integer FROM jsonb_array_elements(area -> 'coordinates') AS ring)
    ELSE 1
  END;

ALTER TABLE geofences ADD COLUMN vertex_count integer NOT NULL GENERATED ALWAYS AS (geofence_vertex_count(area)) STORED;
