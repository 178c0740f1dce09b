import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configVariables } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';

const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');

describe('README', () => {
  it('documents every configuration variable', () => {
    for (const variable of configVariables) expect(readme, variable.name).toContain(`| \`${variable.name}\` |`);
  });

  it('gives the two quick-start commands that CI and newcomers run', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
    expect(readFileSync(join(projectRoot, '.ci', 'run'), 'utf8')).toContain('npm ci && npm test');
  });
});
