/**
 * The console's static files, read once at start: src/console/assets (one stylesheet, small ES
 * modules, the favicon and the map marker) and Leaflet's own build from its npm package (served
 * from here like the rest: no CDN, and the CSP stays `'self'`). Pages link them with a content
 * hash in the query, so they are cached for a year and a new deployment is fetched at once.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { projectRoot } from '../paths.js';

export const assetsDir = join(projectRoot, 'src', 'console', 'assets');

const contentTypes: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

export interface Asset {
  body: Buffer;
  gzipped: Buffer;
  contentType: string;
  version: string;
}

const leafletDir = dirname(createRequire(import.meta.url).resolve('leaflet/dist/leaflet.js'));

/** Each asset's file. */
const assetFiles = {
  'console.css': join(assetsDir, 'console.css'),
  'confirm-dialog.js': join(assetsDir, 'confirm-dialog.js'),
  'live.js': join(assetsDir, 'live.js'),
  'vehicle-map.js': join(assetsDir, 'vehicle-map.js'),
  'favicon.svg': join(assetsDir, 'favicon.svg'),
  'map-marker.svg': join(assetsDir, 'map-marker.svg'),
  'leaflet.js': join(leafletDir, 'leaflet.js'),
  'leaflet.css': join(leafletDir, 'leaflet.css'),
};
export type AssetName = keyof typeof assetFiles;

function load(name: AssetName): Asset {
  const body = readFileSync(assetFiles[name]);
  return {
    body,
    gzipped: gzipSync(body, { level: 9 }),
    contentType: contentTypes[name.split('.').pop()!]!,
    version: createHash('sha256').update(body).digest('base64url').slice(0, 10),
  };
}

export const assets: ReadonlyMap<string, Asset> = new Map(
  (Object.keys(assetFiles) as AssetName[]).map((name) => [name, load(name)]),
);

export function assetUrl(name: AssetName): string {
  return `/console/assets/${name}?v=${assets.get(name)!.version}`;
}
