/**
 * Geofence geometry (DESIGN §11, docs/monitoring.md "Geofences"): validating an area, testing a
 * point, and catching a crossing between two sparse fixes, behind a grid index so a query reads
 * only the fences near it. Pure; no dependency (a fence is a few hundred vertices at most, and the
 * cost is the point-in-polygon test, not the index: research/monitoring-anchors.md §5).
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
import type { FieldError } from '../errors.js';
import type { Geofence, GeofenceArea } from './types.js';

/** Positions over all rings of one polygon: bounds the per-query work and the stored size. */
export const maxGeofenceVertices = 2000;
/** Larger areas are not geofences but regions; 100 km also keeps the flat-plane error small. */
export const maxCircleRadiusM = 100_000;
/** Mean Earth radius (IUGG), metres. */
const earthRadiusM = 6_371_008.8;
/** Grid cell edge in degrees: about 5.5 km north–south, a city district. */
const cellDegrees = 0.05;
/** A fence covering more cells than this is kept in a list every query reads instead. */
const maxCellsPerFence = 4096;
/** A segment whose box covers more cells than this reads every fence (bounding boxes first). */
const maxCellsPerQuery = 1024;
/** At most this many validation errors are answered: enough to fix a payload, bounded for a huge one. */
const maxErrors = 20;

interface Point {
  lat: number;
  lon: number;
}

type ParseResult = { ok: true; area: GeofenceArea } | { ok: false; errors: FieldError[] };

const toRadians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in metres (haversine). */
export function distanceM(a: Point, b: Point): number {
  const dLat = toRadians(b.lat - a.lat);
  const dLon = toRadians(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(a.lat)) * Math.cos(toRadians(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * earthRadiusM * Math.asin(Math.min(1, Math.sqrt(h)));
}

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
  let parsedCenter: Point | null = null;
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

interface PreparedFence {
  fence: Geofence;
  /** Position in the constructor's list: answers keep that order. */
  order: number;
  box: Box;
  contains(point: Point): boolean;
  boundaryCrossedBy(from: Point, to: Point): boolean;
}

const boxesOverlap = (a: Box, b: Box) =>
  a.minLon <= b.maxLon && b.minLon <= a.maxLon && a.minLat <= b.maxLat && b.minLat <= a.maxLat;

const inBox = (box: Box, p: Point) =>
  p.lon >= box.minLon && p.lon <= box.maxLon && p.lat >= box.minLat && p.lat <= box.maxLat;

function segmentBox(a: Point, b: Point): Box {
  return {
    minLon: Math.min(a.lon, b.lon),
    minLat: Math.min(a.lat, b.lat),
    maxLon: Math.max(a.lon, b.lon),
    maxLat: Math.max(a.lat, b.lat),
  };
}

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

function preparePolygon(fence: Geofence, order: number, rings: Array<Array<[number, number]>>): PreparedFence {
  const box: Box = { minLon: Infinity, minLat: Infinity, maxLon: -Infinity, maxLat: -Infinity };
  for (const ring of rings) {
    for (const [lon, lat] of ring) {
      box.minLon = Math.min(box.minLon, lon);
      box.maxLon = Math.max(box.maxLon, lon);
      box.minLat = Math.min(box.minLat, lat);
      box.maxLat = Math.max(box.maxLat, lat);
    }
  }
  return {
    fence,
    order,
    box,
    contains(point) {
      if (!inBox(box, point)) return false;
      // Even-odd over every ring: crossing a hole's edge leaves the area, as crossing the outer one does.
      let inside = false;
      for (const ring of rings) {
        for (let i = 1; i < ring.length; i++) {
          const [xi, yi] = ring[i]!;
          const [xj, yj] = ring[i - 1]!;
          if (yi > point.lat !== yj > point.lat && point.lon < ((xj - xi) * (point.lat - yi)) / (yj - yi) + xi) {
            inside = !inside;
          }
        }
      }
      return inside;
    },
    boundaryCrossedBy(from, to) {
      if (!boxesOverlap(box, segmentBox(from, to))) return false;
      for (const ring of rings) {
        for (let i = 1; i < ring.length; i++) {
          const [xi, yi] = ring[i]!;
          const [xj, yj] = ring[i - 1]!;
          if (segmentsIntersect(from.lon, from.lat, to.lon, to.lat, xj, yj, xi, yi)) return true;
        }
      }
      return false;
    },
  };
}

function prepareCircle(fence: Geofence, order: number, center: Point, radiusM: number): PreparedFence {
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
  const local = (p: Point): [number, number] => [
    toRadians(p.lon - center.lon) * cosLat * earthRadiusM,
    toRadians(p.lat - center.lat) * earthRadiusM,
  ];
  return {
    fence,
    order,
    box,
    contains: (point) => inBox(box, point) && distanceM(center, point) <= radiusM,
    boundaryCrossedBy(from, to) {
      if (!boxesOverlap(box, segmentBox(from, to))) return false;
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

function prepare(fence: Geofence, order: number): PreparedFence {
  const area = fence.area;
  return area.type === 'Polygon'
    ? preparePolygon(fence, order, area.coordinates)
    : prepareCircle(fence, order, area.center, area.radius_m);
}

const cellOf = (degrees: number) => Math.floor(degrees / cellDegrees);
/** One number per cell: longitude cells span −3600…3600, latitude cells −1800…1800. */
const cellKey = (i: number, j: number) => (i + 4000) * 8000 + (j + 4000);

/**
 * The fences of one subscription, indexed on a grid of `cellDegrees` cells by bounding box. A
 * query reads the fences of the cells it touches (plus the few that cover very many cells) and
 * tests only those exactly: linear in the vertices of the nearby fences. Built once per fence
 * list (see `geofenceIndexFor`).
 */
export class GeofenceIndex {
  private readonly cells = new Map<number, PreparedFence[]>();
  private readonly large: PreparedFence[] = [];
  private readonly all: PreparedFence[];

  constructor(fences: readonly Geofence[]) {
    this.all = fences.map(prepare);
    for (const prepared of this.all) {
      const { minLon, minLat, maxLon, maxLat } = prepared.box;
      const [i0, i1, j0, j1] = [cellOf(minLon), cellOf(maxLon), cellOf(minLat), cellOf(maxLat)];
      if ((i1 - i0 + 1) * (j1 - j0 + 1) > maxCellsPerFence) {
        this.large.push(prepared);
        continue;
      }
      for (let i = i0; i <= i1; i++) {
        for (let j = j0; j <= j1; j++) {
          const key = cellKey(i, j);
          const list = this.cells.get(key);
          if (list) list.push(prepared);
          else this.cells.set(key, [prepared]);
        }
      }
    }
  }

  private candidates(box: Box): PreparedFence[] {
    const [i0, i1, j0, j1] = [cellOf(box.minLon), cellOf(box.maxLon), cellOf(box.minLat), cellOf(box.maxLat)];
    if ((i1 - i0 + 1) * (j1 - j0 + 1) > maxCellsPerQuery) return this.all;
    const found = new Set<PreparedFence>(this.large);
    for (let i = i0; i <= i1; i++) {
      for (let j = j0; j <= j1; j++) {
        for (const prepared of this.cells.get(cellKey(i, j)) ?? []) found.add(prepared);
      }
    }
    return [...found].sort((a, b) => a.order - b.order);
  }

  /** The fences that contain the point, in the constructor's order. */
  containing(point: Point): Geofence[] {
    if (!Number.isFinite(point.lat) || !Number.isFinite(point.lon)) return [];
    return this.candidates({ minLon: point.lon, maxLon: point.lon, minLat: point.lat, maxLat: point.lat })
      .filter((prepared) => prepared.contains(point))
      .map((prepared) => prepared.fence);
  }

  /**
   * The fences whose boundary the straight segment from → to touches, in the constructor's order.
   * With both ends outside a fence, that means the segment passed through it.
   */
  crossedBy(from: Point, to: Point): Geofence[] {
    if (![from.lat, from.lon, to.lat, to.lon].every(Number.isFinite)) return [];
    return this.candidates(segmentBox(from, to))
      .filter((prepared) => prepared.boundaryCrossedBy(from, to))
      .map((prepared) => prepared.fence);
  }
}

const indexes = new WeakMap<readonly Geofence[], GeofenceIndex>();

/**
 * The index of a fence list, built once per list object: the worker hands every vehicle of a
 * company the same (never mutated) list, so the grid is not rebuilt per evaluation.
 */
export function geofenceIndexFor(fences: readonly Geofence[]): GeofenceIndex {
  let index = indexes.get(fences);
  if (!index) indexes.set(fences, (index = new GeofenceIndex(fences)));
  return index;
}
