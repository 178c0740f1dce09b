/**
 * Offline reverse geocoding (src/domain/places.ts) over the shipped GeoNames data: a point in a
 * city, the nearer of two cities across a border, the sea (the nearest coastal place with its
 * distance, or none past placeRadiusKm), the poles, the antimeridian, and the coverage grid giving
 * the very answers of the plain kd-tree search.
 */
import { around, distance } from 'geokdbush';
import { describe, expect, it } from 'vitest';
import { loadPlaces, nearestPlace, placeLabel, placeRadiusKm } from '../../src/domain/places.js';

const at = (lat: number, lon: number) => nearestPlace({ lat, lon });

/** The point `share` of the way from a to b (short distances: linear is close enough). */
const between = (a: [number, number], b: [number, number], share: number) => ({
  lat: a[0] + (b[0] - a[0]) * share,
  lon: a[1] + (b[1] - a[1]) * share,
});

describe('nearestPlace', () => {
  it('names the city a point is in, with its region, country and distance', () => {
    expect(at(30.2672, -97.7431)).toEqual({
      name: 'Austin',
      region: 'Texas',
      countryCode: 'US',
      countryName: 'United States',
      distanceKm: expect.closeTo(0, 1),
    });
    expect(at(-33.8688, 151.2093)).toMatchObject({
      name: 'Sydney',
      region: 'New South Wales',
      countryCode: 'AU',
      countryName: 'Australia',
    });
    expect(at(78.2232, 15.6267)).toMatchObject({ name: 'Longyearbyen', countryCode: 'SJ' });
  });

  it('across a border, picks whichever city is nearer, each in its own country', () => {
    const detroit: [number, number] = [42.3314, -83.0458];
    const windsor: [number, number] = [42.3001, -83.0165];
    expect(nearestPlace(between(detroit, windsor, 0.45))).toMatchObject({ name: 'Detroit', countryCode: 'US' });
    expect(nearestPlace(between(detroit, windsor, 0.55))).toMatchObject({
      name: 'Windsor',
      region: 'Ontario',
      countryCode: 'CA',
    });
    const elPaso: [number, number] = [31.7587, -106.4869];
    const juarez: [number, number] = [31.7202, -106.4608];
    expect(nearestPlace(between(elPaso, juarez, 0.45))).toMatchObject({ name: 'El Paso', region: 'Texas' });
    expect(nearestPlace(between(elPaso, juarez, 0.55))).toMatchObject({
      name: 'Ciudad Juárez',
      region: 'Chihuahua',
      countryCode: 'MX',
    });
    // The tripoint of Switzerland, France and Germany at Basel.
    expect(at(47.5584, 7.5733)).toMatchObject({ name: 'Basel', countryCode: 'CH' });
    expect(at(47.5906, 7.5586)).toMatchObject({ name: 'Saint-Louis', countryCode: 'FR' });
    expect(at(47.5947, 7.6108)).toMatchObject({ name: 'Weil am Rhein', countryCode: 'DE' });
  });

  it('at sea: the nearest coastal place with its distance, and none past the radius', () => {
    const offCapeCod = at(41.9, -69.6);
    expect(offCapeCod).toMatchObject({ name: 'Eastham', region: 'Massachusetts', countryCode: 'US' });
    expect(offCapeCod!.distanceKm).toBeGreaterThan(25);
    expect(offCapeCod!.distanceKm).toBeLessThan(placeRadiusKm);
    expect(at(32.55, -117.5)).toMatchObject({ name: 'Coronado', distanceKm: expect.closeTo(33.3, 0) });
    expect(at(27.5, -90)).toBeNull(); // the Gulf of Mexico
    expect(at(54.5, 3)).toBeNull(); // the North Sea, 190 km from Vlieland
    expect(at(30, -40)).toBeNull(); // the mid-Atlantic
  });

  it('the radius is a hard edge: 49 km from a lone town it is named, 51 km away nothing is', () => {
    const tonopah = { lat: 38.06716, lon: -117.23008 };
    const north = (km: number) => ({ lat: tonopah.lat + (km / 6371) * (180 / Math.PI), lon: tonopah.lon });
    expect(nearestPlace(north(49))).toMatchObject({ name: 'Tonopah', distanceKm: expect.closeTo(49, 1) });
    expect(nearestPlace(north(51))).toBeNull();
  });

  it('at the poles: no crash, and no place (the nearest is 1,300 km away)', () => {
    for (const [lat, lon] of [
      [90, 0],
      [90, 180],
      [-90, 0],
      [-90, -180],
      [89.9, 45],
      [-89.9, -120],
    ] as const) {
      expect(at(lat, lon), `${lat},${lon}`).toBeNull();
    }
  });

  it('across the antimeridian: 180 and -180 are one meridian, and a place on the other side is found', () => {
    // Egvekinot, Chukotka, lies at 66.32° N, 179.12° W.
    const east = at(66.32, 180);
    expect(east).toMatchObject({ name: 'Egvekinot', countryCode: 'RU', distanceKm: expect.closeTo(39.4, 0) });
    expect(at(66.32, -180)).toMatchObject({ name: 'Egvekinot', distanceKm: expect.closeTo(east!.distanceKm, 9) });
    expect(at(66.32, 179.9)).toMatchObject({ name: 'Egvekinot', distanceKm: expect.closeTo(43.8, 0) });
  });

  it('answers null for what is not a point on Earth', () => {
    expect(at(Number.NaN, 0)).toBeNull();
    expect(at(0, Number.POSITIVE_INFINITY)).toBeNull();
    expect(at(90.5, 0)).toBeNull();
    expect(at(0, -181)).toBeNull();
  });

  it('the coverage grid never changes an answer of the kd-tree search', () => {
    const places = loadPlaces();
    let state = 18;
    const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const points = Array.from({ length: 10_000 }, (_, i) => {
      if (i % 2 === 0) return { lat: (Math.asin(2 * random() - 1) * 180) / Math.PI, lon: random() * 360 - 180 };
      const id = Math.floor(random() * places.size);
      return { lat: places.lat[id]! + (random() - 0.5) * 1.2, lon: places.lon[id]! + (random() - 0.5) * 1.2 };
    });
    let found = 0;
    const differing: string[] = [];
    for (const point of points) {
      if (Math.abs(point.lat) > 90 || Math.abs(point.lon) > 180) continue;
      const [id] = around(places.tree, point.lon, point.lat, 1, placeRadiusKm);
      const place = nearestPlace(point, places);
      if (id !== undefined) found++;
      const expected =
        id === undefined ? null : [places.names[id], distance(point.lon, point.lat, places.lon[id]!, places.lat[id]!)];
      const got = place && [place.name, place.distanceKm];
      if (JSON.stringify(got) !== JSON.stringify(expected))
        differing.push(`${JSON.stringify(point)}: ${got} ≠ ${expected}`);
    }
    expect(differing).toEqual([]);
    // Both kinds of answer were compared, many times.
    expect(found).toBeGreaterThan(2_500);
    expect(points.length - found).toBeGreaterThan(2_500);
  });
});

describe('placeLabel', () => {
  it('is "City, Region, CC", or "City, CC" where GeoNames names no region', () => {
    expect(placeLabel(at(41.85, -87.65)!)).toBe('Chicago, Illinois, US');
    expect(placeLabel(at(48.1372, 11.5755)!)).toMatch(/^[^,]+, Bavaria, DE$/);
    const singapore = at(1.2897, 103.8501)!;
    expect(singapore.region).toBeNull();
    expect(placeLabel(singapore)).toBe('Singapore, SG');
  });
});
