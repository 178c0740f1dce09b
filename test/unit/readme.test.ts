import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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

/** README.md and every page under docs/, by path relative to the project root. */
function documents(): string[] {
  const pages = (dir: string): string[] =>
    readdirSync(join(projectRoot, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? pages(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', ...pages('docs')];
}

describe('README and docs', () => {
  it('stand on their own: no pointer to notes or contracts outside the repository', () => {
    for (const path of documents()) {
      const text = readFileSync(join(projectRoot, path), 'utf8');
      expect(text, path).not.toMatch(
        /\.\.\/shared|\/work\/shared|research\/[\w-]+\.md|spec\/00[01]|DESIGN(\.md| §)|notes §/,
      );
    }
  });

  it('link only to files that exist', () => {
    for (const path of documents()) {
      const text = readFileSync(join(projectRoot, path), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
        const file = join(projectRoot, dirname(path), target!.split('#')[0]!);
        expect(existsSync(file), `${path} → ${relative(projectRoot, file)}`).toBe(true);
      }
    }
  });
});
