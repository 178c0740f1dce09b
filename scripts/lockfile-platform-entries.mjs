// Re-adds the msgpackr-extract platform entries that a partial registry mirror leaves out of
// package-lock.json (docs/dependencies.md). Run after `npm install` rewrites the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const extract = lock.packages['node_modules/msgpackr-extract'];
if (!extract) throw new Error('msgpackr-extract is not in the lockfile');
const platforms = {
  'darwin-arm64': ['darwin', 'arm64'],
  'darwin-x64': ['darwin', 'x64'],
  'linux-arm': ['linux', 'arm'],
  'linux-arm64': ['linux', 'arm64'],
  'linux-x64': ['linux', 'x64'],
  'win32-x64': ['win32', 'x64'],
};
for (const [name, [os, cpu]] of Object.entries(platforms)) {
  const key = `node_modules/@msgpackr-extract/msgpackr-extract-${name}`;
  lock.packages[key] ??= {
    version: extract.optionalDependencies[`@msgpackr-extract/msgpackr-extract-${name}`],
    cpu: [cpu],
    license: 'MIT',
    optional: true,
    os: [os],
  };
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
