/**
 * The console's Content Security Policy: no inline script or style anywhere, never framed, every
 * resource from the console itself. The page with the map (Vehicles) also loads images from the
 * map tile host of CONSOLE_MAP_TILES_URL, and from no other.
 */
import type { MapTiles } from '../config.js';

const sameOriginOnly =
  "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

export interface ConsolePolicies {
  page: string;
  mapPage: string;
}

export function consolePolicies(tiles: MapTiles): ConsolePolicies {
  return { page: sameOriginOnly, mapPage: `${sameOriginOnly}; img-src 'self' ${tiles.imageSource}` };
}
