/** CONSOLE_MAP_TILES_URL: what it accepts, and the one image source it adds to the map page's CSP. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { consolePolicies } from '../../src/console/content-security-policy.js';

const key = 'ab'.repeat(32);

function tilesOf(url?: string) {
  return loadConfig({ SECRETS_KEY: key, ...(url === undefined ? {} : { CONSOLE_MAP_TILES_URL: url }) }).consoleMapTiles;
}

function errorOf(url: string): string {
  try {
    tilesOf(url);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`expected a ConfigError for ${url}`);
}

const sameOriginOnly =
  "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

describe('console map tiles', () => {
  it("defaults to OpenStreetMap's tiles, and widens the map page's images to that origin only", () => {
    const tiles = tilesOf();
    expect(tiles).toEqual({
      urlTemplate: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
      imageSource: 'https://tile.openstreetmap.org',
    });
    expect(consolePolicies(tiles)).toEqual({
      page: sameOriginOnly,
      mapPage: `${sameOriginOnly}; img-src 'self' https://tile.openstreetmap.org`,
    });
  });

  it('takes a custom host with its port, scheme and normalised case; path, query and key stay out of the CSP', () => {
    expect(tilesOf('http://Tiles.Example.TEST:8080/osm/{z}/{x}/{y}.png?key=secret').imageSource).toBe(
      'http://tiles.example.test:8080',
    );
    expect(tilesOf('https://tiles.example.test:443/{z}/{x}/{y}@2x.png').imageSource).toBe('https://tiles.example.test');
    expect(tilesOf('http://127.0.0.1:9/{z}/{x}/{y}.png').imageSource).toBe('http://127.0.0.1:9');
    expect(tilesOf('http://[::1]:8080/{z}/{x}/{y}.png').imageSource).toBe('http://[::1]:8080');
  });

  it('turns a {s} subdomain label into a wildcard of that domain alone', () => {
    const tiles = tilesOf('https://{s}.tile.example.test/{z}/{x}/{y}.png');
    expect(tiles.urlTemplate).toBe('https://{s}.tile.example.test/{z}/{x}/{y}.png');
    expect(consolePolicies(tiles).mapPage).toBe(`${sameOriginOnly}; img-src 'self' https://*.tile.example.test`);
  });

  it('refuses what is not a tile URL, with one line naming the variable', () => {
    expect(errorOf('not a url')).toBe('Invalid configuration: CONSOLE_MAP_TILES_URL is not a valid URL');
    expect(errorOf('ftp://tiles.example.test/{z}/{x}/{y}.png')).toMatch(/must use http: or https: \(got "ftp:"\)/);
    expect(errorOf('javascript:alert(1)//{z}{x}{y}')).toMatch(/must use http: or https:/);
    expect(errorOf('https://tiles.example.test/tile.png')).toMatch(/must contain \{z\}, \{x\} and \{y\}/);
    expect(errorOf('https://user:pass@tiles.example.test/{z}/{x}/{y}.png')).toMatch(/must not carry a user name/);
  });

  it('refuses a host that could break out of the CSP it is written into', () => {
    for (const url of [
      'https://evil.test;script-src-elem*/{z}/{x}/{y}.png',
      "https://a'b.test/{z}/{x}/{y}.png",
      'https://*.example.test/{z}/{x}/{y}.png',
      'https://a{s}.example.test/{z}/{x}/{y}.png',
      'https://{s}/{z}/{x}/{y}.png',
    ]) {
      expect(errorOf(url), url).toMatch(
        /^Invalid configuration: CONSOLE_MAP_TILES_URL (has a host|is not a valid URL)/,
      );
    }
  });

  it('keeps the attribution as plain text, bounded', () => {
    const config = loadConfig({ SECRETS_KEY: key });
    expect(config.consoleMapAttribution).toBe('© OpenStreetMap contributors');
    expect(() => loadConfig({ SECRETS_KEY: key, CONSOLE_MAP_ATTRIBUTION: 'x'.repeat(201) })).toThrow(
      'Invalid configuration: CONSOLE_MAP_ATTRIBUTION must be at most 200 characters',
    );
  });
});
