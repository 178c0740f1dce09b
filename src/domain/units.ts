/** Unit conversions. Canonical storage is metric; miles appear only at the API edge. */
export const kmPerMile = 1.609344;

export const msPerDay = 24 * 60 * 60 * 1000;

export function milesToKm(miles: number): number {
  return miles * kmPerMile;
}

export function kmToMiles(km: number): number {
  return km / kmPerMile;
}

/** Rounds for presentation (0.01 of the unit: 10 m for km), never for storage. */
export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
