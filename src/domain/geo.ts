/** Points, distances and geofence areas on the Earth's surface (geofences, dispatch, the simulated fleet). */

export interface LatLon {
  lat: number;
  lon: number;
}

/** Mean Earth radius (IUGG), metres. */
export const earthRadiusM = 6_371_008.8;

export const toRadians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in metres (haversine). */
export function distanceM(a: LatLon, b: LatLon): number {
  const dLat = toRadians(b.lat - a.lat);
  const dLon = toRadians(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(a.lat)) * Math.cos(toRadians(b.lat)) * Math.sin(dLon / 2) ** 2;
  // min() keeps float noise on antipodal points from pushing asin out of its domain.
  return 2 * earthRadiusM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A geofence as the detectors see it (GeoJSON polygon rings in [lon, lat], or a circle). */
export type GeofenceArea =
  | { type: 'Polygon'; coordinates: Array<Array<[number, number]>> }
  | { type: 'Circle'; center: LatLon; radius_m: number };

export interface Geofence {
  id: string;
  name: string;
  area: GeofenceArea;
}
