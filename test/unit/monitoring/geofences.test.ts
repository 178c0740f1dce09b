import { describe, expect, it } from 'vitest';
import {
  GeofenceIndex,
  geofenceIndexFor,
  maxCircleRadiusM,
  maxGeofenceVertices,
  parseGeofenceArea,
} from '../../../src/monitoring/geofences.js';
import { distanceM } from '../../../src/domain/geo.js';
import type { Geofence, GeofenceArea } from '../../../src/domain/geo.js';

type Ring = Array<[number, number]>;
const rect = (lon0: number, lat0: number, lon1: number, lat1: number): Ring => [
  [lon0, lat0],
  [lon1, lat0],
  [lon1, lat1],
  [lon0, lat1],
  [lon0, lat0],
];
const polygon = (...rings: Ring[]): GeofenceArea => ({ type: 'Polygon', coordinates: rings });
const fence = (id: string, area: GeofenceArea): Geofence => ({ id, name: id, area });
/** The point `metres` north of (lat, lon). */
const north = (lat: number, lon: number, metres: number) => ({
  lat: lat + (metres / 6_371_008.8) * (180 / Math.PI),
  lon,
});

const depot = fence('depot', polygon(rect(13.4, 52.5, 13.41, 52.51), rect(13.403, 52.503, 13.407, 52.507)));
const yard = fence('yard', { type: 'Circle', center: { lat: 52.52, lon: 13.4 }, radius_m: 500 });

describe('parseGeofenceArea', () => {
  it('accepts a polygon with a hole and a circle, normalized (altitude and foreign members dropped)', () => {
    expect(parseGeofenceArea(depot.area)).toEqual({ ok: true, area: depot.area });
    const withAltitude = {
      type: 'Polygon',
      bbox: [0, 0, 1, 1],
      coordinates: [
        [
          [0, 0, 5],
          [1, 0, 5],
          [1, 1, 5],
          [0, 0, 5],
        ],
      ],
    };
    expect(parseGeofenceArea(withAltitude)).toEqual({
      ok: true,
      area: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
    });
    expect(parseGeofenceArea({ ...yard.area, color: 'red' })).toEqual({ ok: true, area: yard.area });
  });

  it.each([
    [null, 'area'],
    [{ type: 'Point', coordinates: [0, 0] }, 'area.type'],
    [{ type: 'Polygon', coordinates: [] }, 'area.coordinates'],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      },
      'area.coordinates[0]',
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      },
      'area.coordinates[0]',
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      },
      'area.coordinates[0]',
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [181, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
      'area.coordinates[0][1]',
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 91],
            [1, 1],
            [0, 0],
          ],
        ],
      },
      'area.coordinates[0][1]',
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            ['1', 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
      'area.coordinates[0][1]',
    ],
    [{ type: 'Polygon', coordinates: [[[0, 0], [1], [1, 1], [0, 0]]] }, 'area.coordinates[0][1]'],
    [{ type: 'Polygon', coordinates: [rect(0, 0, 1, 1), 'hole'] }, 'area.coordinates[1]'],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [179, 0],
            [-179, 0],
            [-179, 1],
            [179, 0],
          ],
        ],
      },
      'area.coordinates[0][1]',
    ],
    [{ type: 'Circle', center: { lat: 91, lon: 0 }, radius_m: 10 }, 'area.center'],
    [{ type: 'Circle', center: [0, 0], radius_m: 10 }, 'area.center'],
    [{ type: 'Circle', center: { lat: 0, lon: 0 }, radius_m: 0 }, 'area.radius_m'],
    [{ type: 'Circle', center: { lat: 0, lon: 0 }, radius_m: maxCircleRadiusM + 1 }, 'area.radius_m'],
    [{ type: 'Circle', center: { lat: 0, lon: 0 }, radius_m: '10' }, 'area.radius_m'],
  ])('refuses %j on %s', (area, field) => {
    const result = parseGeofenceArea(area);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.field)).toContain(field);
  });

  it('bounds the vertex count: the maximum passes, one more is refused', () => {
    const ring = (positions: number): Ring => {
      const corners: Ring = Array.from({ length: positions - 1 }, (_, i) => {
        const angle = (2 * Math.PI * i) / (positions - 1);
        return [13.4 + 0.01 * Math.cos(angle), 52.5 + 0.01 * Math.sin(angle)];
      });
      return [...corners, corners[0]!];
    };
    expect(parseGeofenceArea(polygon(ring(maxGeofenceVertices))).ok).toBe(true);
    const tooMany = parseGeofenceArea(polygon(ring(maxGeofenceVertices + 1)));
    expect(tooMany).toEqual({
      ok: false,
      errors: [
        {
          field: 'area.coordinates',
          message: `has ${maxGeofenceVertices + 1} positions; at most ${maxGeofenceVertices}`,
        },
      ],
    });
  });

  it('answers at most 20 errors for a payload full of them', () => {
    const bad = Array.from({ length: 50 }, () => [[0, 0]]);
    const result = parseGeofenceArea({ type: 'Polygon', coordinates: bad });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toHaveLength(20);
  });
});

describe('GeofenceIndex', () => {
  const index = new GeofenceIndex([depot, yard]);
  const ids = (fences: Geofence[]) => fences.map((f) => f.id);

  it('a polygon contains what is inside its outer ring and outside its holes', () => {
    expect(ids(index.containing({ lat: 52.501, lon: 13.401 }))).toEqual(['depot']);
    expect(ids(index.containing({ lat: 52.505, lon: 13.405 }))).toEqual([]);
    expect(ids(index.containing({ lat: 52.5085, lon: 13.405 }))).toEqual(['depot']);
    expect(ids(index.containing({ lat: 52.511, lon: 13.405 }))).toEqual([]);
    expect(ids(index.containing({ lat: 52.505, lon: 13.399 }))).toEqual([]);
  });

  it('a circle contains points within its radius by great-circle distance', () => {
    expect(distanceM({ lat: 52.52, lon: 13.4 }, north(52.52, 13.4, 499))).toBeCloseTo(499, 6);
    expect(ids(index.containing(north(52.52, 13.4, 499.9)))).toEqual(['yard']);
    expect(ids(index.containing(north(52.52, 13.4, 500.1)))).toEqual([]);
    // East–west the degrees are shorter (cos 52.52°): 0.0073° east is ≈ 495 m, 0.0074° ≈ 502 m.
    expect(ids(index.containing({ lat: 52.52, lon: 13.4073 }))).toEqual(['yard']);
    expect(ids(index.containing({ lat: 52.52, lon: 13.4074 }))).toEqual([]);
  });

  it('overlapping fences are all answered, in the list order', () => {
    const overlapping = new GeofenceIndex([yard, fence('city', polygon(rect(13.3, 52.4, 13.5, 52.6))), depot]);
    expect(ids(overlapping.containing({ lat: 52.501, lon: 13.401 }))).toEqual(['city', 'depot']);
    expect(ids(overlapping.containing({ lat: 52.52, lon: 13.4 }))).toEqual(['yard', 'city']);
  });

  it('a segment between two fixes outside a fence that passes through it crosses it; one passing by does not', () => {
    expect(ids(index.crossedBy({ lat: 52.5015, lon: 13.39 }, { lat: 52.5015, lon: 13.42 }))).toEqual(['depot']);
    expect(ids(index.crossedBy({ lat: 52.512, lon: 13.39 }, { lat: 52.512, lon: 13.42 }))).toEqual([]);
    expect(ids(index.crossedBy({ lat: 52.515, lon: 13.4 }, { lat: 52.525, lon: 13.4 }))).toEqual(['yard']);
    // Passing 600 m beside the circle's centre misses it.
    const beside = north(52.52, 13.4, 600);
    expect(ids(index.crossedBy({ lat: beside.lat, lon: 13.38 }, { lat: beside.lat, lon: 13.42 }))).toEqual([]);
    // Both ends inside the circle: its boundary is not touched.
    expect(ids(index.crossedBy({ lat: 52.52, lon: 13.4 }, north(52.52, 13.4, 100)))).toEqual([]);
  });

  it('a fence larger than the grid limit is still found', () => {
    const country = fence('country', polygon(rect(5, 47, 15, 55)));
    const big = new GeofenceIndex([country, depot]);
    expect(ids(big.containing({ lat: 52.501, lon: 13.401 }))).toEqual(['country', 'depot']);
    expect(ids(big.crossedBy({ lat: 50, lon: 4 }, { lat: 50, lon: 16 }))).toEqual(['country']);
  });

  it('agrees with testing every fence, for random fences and points', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const fences: Geofence[] = [];
    for (let i = 0; i < 300; i++) {
      const lon = 13 + random();
      const lat = 52 + random();
      const size = 0.001 + random() * 0.05;
      fences.push(
        i % 2 === 0
          ? fence(`p${i}`, polygon(rect(lon, lat, lon + size, lat + size)))
          : fence(`c${i}`, { type: 'Circle', center: { lat, lon }, radius_m: size * 50_000 }),
      );
    }
    const indexed = new GeofenceIndex(fences);
    const oneByOne = fences.map((f) => new GeofenceIndex([f]));
    let [insideHits, crossingHits] = [0, 0];
    for (let n = 0; n < 300; n++) {
      const a = { lat: 52 + random(), lon: 13 + random() };
      const b = { lat: a.lat + (random() - 0.5) * 0.05, lon: a.lon + (random() - 0.5) * 0.05 };
      const expectedInside = oneByOne
        .filter((single) => single.containing(a).length > 0)
        .map((single) => single.containing(a)[0]!.id);
      expect(ids(indexed.containing(a))).toEqual(expectedInside);
      insideHits += expectedInside.length;
      const expectedCrossed = oneByOne
        .filter((single) => single.crossedBy(a, b).length > 0)
        .map((single) => single.crossedBy(a, b)[0]!.id);
      expect(ids(indexed.crossedBy(a, b))).toEqual(expectedCrossed);
      crossingHits += expectedCrossed.length;
    }
    // Not a vacuous comparison: many points fall in fences and many segments cross them.
    expect(insideHits).toBeGreaterThan(50);
    expect(crossingHits).toBeGreaterThan(50);
  });

  it('builds one index per fence list object', () => {
    const list = [depot, yard];
    expect(geofenceIndexFor(list)).toBe(geofenceIndexFor(list));
    expect(geofenceIndexFor([depot, yard])).not.toBe(geofenceIndexFor(list));
  });

  it('answers nothing for a point that is not a number', () => {
    expect(index.containing({ lat: Number.NaN, lon: 13.4 })).toEqual([]);
    expect(index.crossedBy({ lat: Number.NaN, lon: 13.4 }, { lat: 52.5, lon: 13.4 })).toEqual([]);
  });
});

describe('GeofenceIndex on large polygons (edge index)', () => {
  const ids = (fences: Geofence[]) => fences.map((f) => f.id);
  /** Even-odd over every edge of every ring, no index: the definition the index must agree with. */
  function bruteContains(area: GeofenceArea & { type: 'Polygon' }, p: { lat: number; lon: number }): boolean {
    let inside = false;
    for (const ring of area.coordinates) {
      for (let i = 1; i < ring.length; i++) {
        const [xi, yi] = ring[i]!;
        const [xj, yj] = ring[i - 1]!;
        if (yi > p.lat !== yj > p.lat && p.lon < ((xj - xi) * (p.lat - yi)) / (yj - yi) + xi) inside = !inside;
      }
    }
    return inside;
  }
  const cross = (ax: number, ay: number, bx: number, by: number, cx: number, cy: number) =>
    (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
  /** Whether segment ab meets any edge (proper crossings; random data never touches exactly). */
  function bruteCrossed(
    area: GeofenceArea & { type: 'Polygon' },
    a: { lat: number; lon: number },
    b: { lat: number; lon: number },
  ): boolean {
    return area.coordinates.some((ring) =>
      ring.slice(1).some(([x1, y1], i) => {
        const [x0, y0] = ring[i]!;
        const d1 = cross(x0, y0, x1, y1, a.lon, a.lat);
        const d2 = cross(x0, y0, x1, y1, b.lon, b.lat);
        const d3 = cross(a.lon, a.lat, b.lon, b.lat, x0, y0);
        const d4 = cross(a.lon, a.lat, b.lon, b.lat, x1, y1);
        return d1 * d2 < 0 && d3 * d4 < 0;
      }),
    );
  }

  it('agrees with testing every edge, for random jagged polygons with holes, points and segments', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    /** A star-shaped ring of `n` corners around (lon, lat): jagged, so rays and segments meet many edges. */
    const star = (lon: number, lat: number, radius: number, n: number, reverse = false): Ring => {
      const ring: Ring = Array.from({ length: n }, (_, i) => {
        const angle = ((reverse ? n - i : i) / n) * 2 * Math.PI;
        const r = radius * (0.55 + 0.45 * random());
        return [lon + r * Math.cos(angle), lat + r * Math.sin(angle)];
      });
      return [...ring, ring[0]!];
    };
    const fences: Geofence[] = [];
    for (let i = 0; i < 24; i++) {
      const lon = 13 + random() * 0.4;
      const lat = 52 + random() * 0.4;
      const radius = 0.02 + random() * 0.08;
      const rings = [star(lon, lat, radius, 400 + Math.floor(random() * 1500))];
      // Every other fence has a hole (a smaller star around the same centre).
      if (i % 2 === 0) rings.push(star(lon, lat, radius * 0.4, 200, true));
      fences.push(fence(`big${i}`, polygon(...rings)));
    }
    const index = new GeofenceIndex(fences);
    const polygons = fences.map((f) => f.area as GeofenceArea & { type: 'Polygon' });
    let [insideHits, crossingHits] = [0, 0];
    for (let n = 0; n < 800; n++) {
      const a = { lat: 51.95 + random() * 0.5, lon: 12.95 + random() * 0.5 };
      const b = { lat: a.lat + (random() - 0.5) * 0.02, lon: a.lon + (random() - 0.5) * 0.02 };
      const expectedInside = fences.filter((_, i) => bruteContains(polygons[i]!, a)).map((f) => f.id);
      expect(ids(index.containing(a))).toEqual(expectedInside);
      insideHits += expectedInside.length;
      const expectedCrossed = fences.filter((_, i) => bruteCrossed(polygons[i]!, a, b)).map((f) => f.id);
      expect(ids(index.crossedBy(a, b))).toEqual(expectedCrossed);
      crossingHits += expectedCrossed.length;
    }
    expect(insideHits).toBeGreaterThan(200);
    expect(crossingHits).toBeGreaterThan(80);
    // The point of the index: far fewer edge tests than the 1,600 queries × every edge.
    const allEdges = polygons.reduce((sum, p) => sum + p.coordinates.reduce((s, r) => s + r.length - 1, 0), 0);
    expect(index.tests).toBeLessThan((1600 * allEdges) / 50);
  });
});
