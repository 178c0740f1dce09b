/**
 * The console's static files (src/console/assets: one stylesheet, two small ES modules, the
 * favicon), read once at start. Pages link them with a content hash in the query, so they are
 * cached for a year and a new deployment is fetched at once.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

const assetNames = ['console.css', 'confirm-dialog.js', 'live.js', 'favicon.svg'] as const;
export type AssetName = (typeof assetNames)[number];

function load(name: AssetName): Asset {
  const body = readFileSync(join(assetsDir, name));
  return {
    body,
    gzipped: gzipSync(body, { level: 9 }),
    contentType: contentTypes[name.split('.').pop()!]!,
    version: createHash('sha256').update(body).digest('base64url').slice(0, 10),
  };
}

export const assets: ReadonlyMap<string, Asset> = new Map(assetNames.map((name) => [name, load(name)]));

export function assetUrl(name: AssetName): string {
  return `/console/assets/${name}?v=${assets.get(name)!.version}`;
}
