/**
 * Geofence geometry (docs/monitoring.md "Geofences"): validating an area, testing a
 * point, and catching a crossing between two sparse fixes. Pure. Two levels of R-tree (flatbush,
 * static, chosen over rbush by measurement: docs/monitoring.md "Geofences") bound a query's work
 * by what is near it: one over the fences' bounding boxes, and one per large polygon over its
 * edges' boxes, so a point or a segment is tested exactly only against the nearby edges of the
 * fences whose boxes hold it (a company may have 1,000 fences of 2,000 vertices).
 *
 * - Polygon: GeoJSON rings of [lon, lat], the first the outer boundary and the others holes,
 *   tested by the even-odd rule in the plane of degrees. Straight edges in degrees and on the
 *   sphere differ by centimetres at city scale, so the plane is exact enough for fences up to a
 *   few tens of kilometres. A point exactly on an edge may fall either side.
 * - Circle: inside when the haversine distance to the centre is at most `radius_m`.
 * - Crossing between two fixes: the straight segment between them intersects the fence's boundary
 *   (polygon: any edge of any ring; circle: the nearest point of the segment is inside and the
 *   farther end outside, in a local metric plane around the centre).
 * - Antimeridian: not supported. An edge spanning more than 180° of longitude is refused (split
 *   such a fence in two); a circle within its radius of ±180° works only on its own side.
 */
import Flatbush from 'flatbush';
import { distanceM, earthRadiusM, toRadians, type LatLon } from '../domain/geo.js';
import type { FieldError } from '../errors.js';
import type { Geofence, GeofenceArea } from '../domain/geo.js';

/** Positions over all rings of one polygon: bounds the per-query work and the stored size. */
export const maxGeofenceVertices = 2000;
/** Larger areas are not geofences but regions; 100 km also keeps the flat-plane error small. */
export const maxCircleRadiusM = 100_000;
/** Polygons of at most this many edges are tested edge by edge: below it a tree costs more than it saves. */
const edgesWithoutIndex = 32;
/** At most this many validation errors are answered: enough to fix a payload, bounded for a huge one. */
const maxErrors = 20;

type ParseResult = { ok: true; area: GeofenceArea } | { ok: false; errors: FieldError[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

function coordinateProblem(lon: unknown, lat: unknown): string | null {
  if (!finite(lon) || !finite(lat)) return 'must be numbers';
  if (lon < -180 || lon > 180) return 'longitude must be between -180 and 180';
  if (lat < -90 || lat > 90) return 'latitude must be between -90 and 90';
  return null;
}

function parseRing(raw: unknown, field: string, errors: FieldError[]): Array<[number, number]> | null {
  if (!Array.isArray(raw)) {
    errors.push({ field, message: 'must be an array of [lon, lat] positions' });
    return null;
  }
  if (raw.length < 4) {
    errors.push({ field, message: 'must have at least 4 positions (a closed ring of 3 corners)' });
    return null;
  }
  const ring: Array<[number, number]> = [];
  for (const [i, position] of raw.entries()) {
    // GeoJSON allows an altitude as a third number; fences are flat, so it is dropped.
    if (!Array.isArray(position) || position.length < 2 || position.length > 3) {
      errors.push({ field: `${field}[${i}]`, message: 'must be [lon, lat]' });
      return null;
    }
    const problem =
      coordinateProblem(position[0], position[1]) ??
      (position.length === 3 && !finite(position[2]) ? 'altitude must be a number' : null);
    if (problem) {
      errors.push({ field: `${field}[${i}]`, message: problem });
      return null;
    }
    ring.push([position[0] as number, position[1] as number]);
  }
  const first = ring[0]!;
  const last = ring[ring.length - 1]!;
  if (first[0] !== last[0] || first[1] !== last[1]) {
    errors.push({ field, message: 'must be closed: the last position equals the first' });
    return null;
  }
  if (new Set(ring.map(([lon, lat]) => `${lon},${lat}`)).size < 3) {
    errors.push({ field, message: 'must have at least 3 distinct corners' });
    return null;
  }
  for (let i = 1; i < ring.length; i++) {
    if (Math.abs(ring[i]![0] - ring[i - 1]![0]) > 180) {
      errors.push({
        field: `${field}[${i}]`,
        message: 'edge crosses the antimeridian (not supported: split the fence)',
      });
      return null;
    }
  }
  return ring;
}

function parsePolygon(coordinates: unknown): ParseResult {
  if (!Array.isArray(coordinates) || coordinates.length === 0) {
    return { ok: false, errors: [{ field: 'area.coordinates', message: 'must be a non-empty array of rings' }] };
  }
  const total = coordinates.reduce<number>((sum, ring) => sum + (Array.isArray(ring) ? ring.length : 0), 0);
  if (total > maxGeofenceVertices) {
    return {
      ok: false,
      errors: [{ field: 'area.coordinates', message: `has ${total} positions; at most ${maxGeofenceVertices}` }],
    };
  }
  const errors: FieldError[] = [];
  const rings: Array<Array<[number, number]>> = [];
  for (const [i, raw] of coordinates.entries()) {
    const ring = parseRing(raw, `area.coordinates[${i}]`, errors);
    if (ring) rings.push(ring);
    if (errors.length >= maxErrors) break;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, area: { type: 'Polygon', coordinates: rings } };
}

function parseCircle(area: Record<string, unknown>): ParseResult {
  const errors: FieldError[] = [];
  const center = area.center;
  let parsedCenter: LatLon | null = null;
  if (!isRecord(center)) errors.push({ field: 'area.center', message: 'must be an object {lat, lon}' });
  else {
    const problem = coordinateProblem(center.lon, center.lat);
    if (problem) errors.push({ field: 'area.center', message: problem });
    else parsedCenter = { lat: center.lat as number, lon: center.lon as number };
  }
  const radius = area.radius_m;
  if (!finite(radius) || radius <= 0 || radius > maxCircleRadiusM) {
    errors.push({
      field: 'area.radius_m',
      message: `must be a number of metres above 0 and at most ${maxCircleRadiusM}`,
    });
  }
  if (errors.length > 0 || !parsedCenter) return { ok: false, errors };
  return { ok: true, area: { type: 'Circle', center: parsedCenter, radius_m: radius as number } };
}

/**
 * Validates a geofence area: a GeoJSON Polygon (closed rings of at least 4 positions, lon/lat in
 * range, at most `maxGeofenceVertices` positions, no antimeridian edge) or a Circle (centre in
 * range, 0 < radius_m ≤ `maxCircleRadiusM`). Answers the area normalized (altitudes and foreign
 * members dropped) or field errors for a 400.
 */
export function parseGeofenceArea(area: unknown): ParseResult {
  if (!isRecord(area))
    return { ok: false, errors: [{ field: 'area', message: 'must be a GeoJSON Polygon or a Circle' }] };
  if (area.type === 'Polygon') return parsePolygon(area.coordinates);
  if (area.type === 'Circle') return parseCircle(area);
  return { ok: false, errors: [{ field: 'area.type', message: 'must be "Polygon" or "Circle"' }] };
}

interface Box {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

/** Counts the exact geometry tests an index ran (edges tested, circles measured): the work of a query. */
interface WorkMeter {
  tests: number;
}

interface PreparedFence {
  box: Box;
  contains(point: LatLon, meter: WorkMeter): boolean;
  boundaryCrossedBy(from: LatLon, to: LatLon, meter: WorkMeter): boolean;
}

const inBox = (box: Box, p: LatLon) =>
  p.lon >= box.minLon && p.lon <= box.maxLon && p.lat >= box.minLat && p.lat <= box.maxLat;

/** Sign of the turn a → b → c in the plane: > 0 left, < 0 right, 0 collinear. */
function orientation(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

function onSegment(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): boolean {
  return Math.min(ax, bx) <= cx && cx <= Math.max(ax, bx) && Math.min(ay, by) <= cy && cy <= Math.max(ay, by);
}

/** Whether segments p1p2 and q1q2 share a point (touching counts). */
function segmentsIntersect(
  p1x: number,
  p1y: number,
  p2x: number,
  p2y: number,
  q1x: number,
  q1y: number,
  q2x: number,
  q2y: number,
): boolean {
  const d1 = orientation(q1x, q1y, q2x, q2y, p1x, p1y);
  const d2 = orientation(q1x, q1y, q2x, q2y, p2x, p2y);
  const d3 = orientation(p1x, p1y, p2x, p2y, q1x, q1y);
  const d4 = orientation(p1x, p1y, p2x, p2y, q2x, q2y);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  return (
    (d1 === 0 && onSegment(q1x, q1y, q2x, q2y, p1x, p1y)) ||
    (d2 === 0 && onSegment(q1x, q1y, q2x, q2y, p2x, p2y)) ||
    (d3 === 0 && onSegment(p1x, p1y, p2x, p2y, q1x, q1y)) ||
    (d4 === 0 && onSegment(p1x, p1y, p2x, p2y, q2x, q2y))
  );
}

/**
 * The edges of a polygon's rings, flat once a query reaches the polygon's box: edge k runs from
 * vertex `starts[k]` to the next one in `xs`/`ys` (each ring is stored closed, so no edge joins
 * two rings). Above `edgesWithoutIndex` edges, an R-tree of edge boxes (flatbush, built then too)
 * hands a query only the edges whose boxes meet its own; below, every edge is tested.
 */
class PolygonEdges {
  readonly box: Box;
  private readonly rings: ReadonlyArray<ReadonlyArray<[number, number]>>;
  private flat: { xs: Float64Array; ys: Float64Array; starts: Uint32Array } | null = null;
  private index: Flatbush | null = null;

  constructor(rings: ReadonlyArray<ReadonlyArray<[number, number]>>) {
    // Only the box now: the fence tree needs it; the rest waits for a query that reaches the box.
    let [minLon, minLat, maxLon, maxLat] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const ring of rings) {
      for (let i = 0; i < ring.length; i++) {
        const lon = ring[i]![0];
        const lat = ring[i]![1];
        if (lon < minLon) minLon = lon;
        if (lon > maxLon) maxLon = lon;
        if (lat < minLat) minLat = lat;
        if (lat > maxLat) maxLat = lat;
      }
    }
    this.rings = rings;
    this.box = { minLon, minLat, maxLon, maxLat };
  }

  /**
   * Calls `visit(x0, y0, x1, y1)` for the edges whose box meets the query box (every edge of a
   * small polygon) until one answers true; answers whether one did.
   */
  someNear(minX: number, minY: number, maxX: number, maxY: number, visit: EdgeVisitor): boolean {
    const { xs, ys, starts } = this.edges();
    if (starts.length <= edgesWithoutIndex) {
      for (const s of starts) if (visit(xs[s]!, ys[s]!, xs[s + 1]!, ys[s + 1]!)) return true;
      return false;
    }
    // The filter does the work and keeps nothing, so a query allocates no result list.
    return this.edgeIndex().collides(minX, minY, maxX, maxY, (k) => {
      const s = starts[k]!;
      return visit(xs[s]!, ys[s]!, xs[s + 1]!, ys[s + 1]!);
    });
  }

  private edges(): { xs: Float64Array; ys: Float64Array; starts: Uint32Array } {
    if (this.flat) return this.flat;
    let vertices = 0;
    for (const ring of this.rings) vertices += ring.length;
    const xs = new Float64Array(vertices);
    const ys = new Float64Array(vertices);
    const starts = new Uint32Array(vertices - this.rings.length);
    let v = 0;
    let e = 0;
    for (const ring of this.rings) {
      for (let i = 0; i < ring.length; i++, v++) {
        xs[v] = ring[i]![0];
        ys[v] = ring[i]![1];
        if (i > 0) starts[e++] = v - 1;
      }
    }
    return (this.flat = { xs, ys, starts });
  }

  private edgeIndex(): Flatbush {
    if (this.index) return this.index;
    const { xs, ys, starts } = this.edges();
    const index = new Flatbush(starts.length);
    for (const s of starts) {
      index.add(
        Math.min(xs[s]!, xs[s + 1]!),
        Math.min(ys[s]!, ys[s + 1]!),
        Math.max(xs[s]!, xs[s + 1]!),
        Math.max(ys[s]!, ys[s + 1]!),
      );
    }
    index.finish();
    return (this.index = index);
  }
}

type EdgeVisitor = (x0: number, y0: number, x1: number, y1: number) => boolean;

function preparePolygon(rings: ReadonlyArray<ReadonlyArray<[number, number]>>): PreparedFence {
  const edges = new PolygonEdges(rings);
  const box = edges.box;
  return {
    box,
    contains(point, meter) {
      if (!inBox(box, point)) return false;
      const { lon, lat } = point;
      // Even-odd over every ring (crossing a hole's edge leaves the area, as crossing the outer
      // one does), along a horizontal ray to the nearer side of the box: only the edges whose box
      // meets the ray can cross it. Both rays see the same parity unless the point is on an edge.
      const east = box.maxLon - lon <= lon - box.minLon;
      let inside = false;
      const [minX, maxX] = east ? [lon, box.maxLon] : [box.minLon, lon];
      edges.someNear(minX, lat, maxX, lat, (xj, yj, xi, yi) => {
        meter.tests++;
        if (yi > lat !== yj > lat) {
          const x = ((xj - xi) * (lat - yi)) / (yj - yi) + xi;
          if (east ? lon < x : lon > x) inside = !inside;
        }
        return false;
      });
      return inside;
    },
    boundaryCrossedBy(from, to, meter) {
      const minX = Math.min(from.lon, to.lon);
      const maxX = Math.max(from.lon, to.lon);
      const minY = Math.min(from.lat, to.lat);
      const maxY = Math.max(from.lat, to.lat);
      return edges.someNear(minX, minY, maxX, maxY, (xj, yj, xi, yi) => {
        meter.tests++;
        return segmentsIntersect(from.lon, from.lat, to.lon, to.lat, xj, yj, xi, yi);
      });
    },
  };
}

function prepareCircle(center: LatLon, radiusM: number): PreparedFence {
  const dLat = (radiusM / earthRadiusM) * (180 / Math.PI);
  const cosLat = Math.cos(toRadians(center.lat));
  // Near a pole a degree of longitude shrinks to nothing: the box then spans every longitude.
  const dLon = cosLat > dLat / 90 ? dLat / cosLat : 360;
  const box: Box = {
    minLon: Math.max(-180, center.lon - dLon),
    maxLon: Math.min(180, center.lon + dLon),
    minLat: Math.max(-90, center.lat - dLat),
    maxLat: Math.min(90, center.lat + dLat),
  };
  /** Metres east and north of the centre (equirectangular: exact enough within 100 km). */
  const local = (p: LatLon): [number, number] => [
    toRadians(p.lon - center.lon) * cosLat * earthRadiusM,
    toRadians(p.lat - center.lat) * earthRadiusM,
  ];
  return {
    box,
    contains(point, meter) {
      if (!inBox(box, point)) return false;
      meter.tests++;
      return distanceM(center, point) <= radiusM;
    },
    boundaryCrossedBy(from, to, meter) {
      meter.tests++;
      const [ax, ay] = local(from);
      const [bx, by] = local(to);
      const dx = bx - ax;
      const dy = by - ay;
      const lengthSquared = dx * dx + dy * dy;
      // The point of the segment nearest the centre, as a fraction along it.
      const t = lengthSquared === 0 ? 0 : Math.min(1, Math.max(0, -(ax * dx + ay * dy) / lengthSquared));
      const nearest = Math.hypot(ax + t * dx, ay + t * dy);
      const farthest = Math.max(Math.hypot(ax, ay), Math.hypot(bx, by));
      return nearest <= radiusM && farthest >= radiusM;
    },
  };
}

/**
 * Each fence's prepared geometry, kept with the fence object: the lists of one company's
 * subscriptions (all fences, or a subset by options.geofence_ids) share the same fence objects
 * (src/monitoring/detect-stage.ts), so a polygon's edge index is built once for all of them.
 */
const preparedFences = new WeakMap<Geofence, PreparedFence>();

function prepared(fence: Geofence): PreparedFence {
  let found = preparedFences.get(fence);
  if (!found) {
    const area = fence.area;
    found = area.type === 'Polygon' ? preparePolygon(area.coordinates) : prepareCircle(area.center, area.radius_m);
    preparedFences.set(fence, found);
  }
  return found;
}

/**
 * The fences of one subscription behind an R-tree of their bounding boxes (flatbush; static, built
 * once per fence list, see `geofenceIndexFor`). A query tests exactly only the fences whose box
 * holds the point (or meets the segment's box), and within a large polygon only the edges near
 * it, so its cost follows what is near the vehicle, not the size of the company's fences.
 */
export class GeofenceIndex {
  private readonly fences: readonly Geofence[];
  private readonly prepared: PreparedFence[];
  private readonly boxes: Flatbush | null;
  private readonly meter: WorkMeter = { tests: 0 };

  constructor(fences: readonly Geofence[]) {
    this.fences = fences;
    this.prepared = fences.map(prepared);
    if (fences.length === 0) {
      this.boxes = null;
      return;
    }
    this.boxes = new Flatbush(fences.length);
    for (const { box } of this.prepared) this.boxes.add(box.minLon, box.minLat, box.maxLon, box.maxLat);
    this.boxes.finish();
  }

  /**
   * Exact geometry tests run so far by this index's queries: one per polygon edge tested and per
   * circle measured. The dry run bounds its work by it (MONITORING_DRY_RUN_MAX_FENCE_TESTS).
   */
  get tests(): number {
    return this.meter.tests;
  }

  /** The positions in the list of the fences whose box meets the query box, ascending (the list's order). */
  private candidates(minLon: number, minLat: number, maxLon: number, maxLat: number): number[] {
    if (!this.boxes) return [];
    return this.boxes.search(minLon, minLat, maxLon, maxLat).sort((a, b) => a - b);
  }

  /** The fences that contain the point, in the constructor's order. */
  containing(point: LatLon): Geofence[] {
    if (!Number.isFinite(point.lat) || !Number.isFinite(point.lon)) return [];
    return this.candidates(point.lon, point.lat, point.lon, point.lat)
      .filter((i) => this.prepared[i]!.contains(point, this.meter))
      .map((i) => this.fences[i]!);
  }

  /**
   * The fences whose boundary the straight segment from → to touches, in the constructor's order.
   * With both ends outside a fence, that means the segment passed through it.
   */
  crossedBy(from: LatLon, to: LatLon): Geofence[] {
    if (![from.lat, from.lon, to.lat, to.lon].every(Number.isFinite)) return [];
    const [minLon, maxLon] = from.lon <= to.lon ? [from.lon, to.lon] : [to.lon, from.lon];
    const [minLat, maxLat] = from.lat <= to.lat ? [from.lat, to.lat] : [to.lat, from.lat];
    return this.candidates(minLon, minLat, maxLon, maxLat)
      .filter((i) => this.prepared[i]!.boundaryCrossedBy(from, to, this.meter))
      .map((i) => this.fences[i]!);
  }
}

const indexes = new WeakMap<readonly Geofence[], GeofenceIndex>();

/**
 * The index of a fence list, built once per list object: the worker hands every vehicle of a
 * company the same (never mutated) list until the company's fences change, so the tree is not
 * rebuilt per evaluation.
 */
export function geofenceIndexFor(fences: readonly Geofence[]): GeofenceIndex {
  let index = indexes.get(fences);
  if (!index) indexes.set(fences, (index = new GeofenceIndex(fences)));
  return index;
}
