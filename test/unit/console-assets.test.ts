/** What the console ships: every asset its route serves, and the JavaScript's size over the wire. */
import { describe, expect, it } from 'vitest';
import { assets } from '../../src/console/assets.js';

/** The budget for all the console's JavaScript, the map library included. */
const javaScriptBudgetBytes = 250 * 1024;

describe('console assets', () => {
  it('ship under 250 KB of JavaScript, gzipped, Leaflet included', () => {
    const scripts = [...assets].filter(([, asset]) => asset.contentType.startsWith('text/javascript'));
    expect(scripts.map(([name]) => name).sort()).toEqual([
      'confirm-dialog.js',
      'leaflet.js',
      'live.js',
      'vehicle-map.js',
    ]);
    // The bytes the asset route sends to a browser that accepts gzip (gzip -9, made at start).
    const sizes = Object.fromEntries(scripts.map(([name, asset]) => [name, asset.gzipped.length]));
    const totalBytes = Object.values(sizes).reduce((sum, bytes) => sum + bytes, 0);
    console.log(`console JavaScript, gzip -9 bytes: ${JSON.stringify(sizes)}, total ${totalBytes}`);
    expect(totalBytes).toBeLessThan(javaScriptBudgetBytes);
  });
});
