/**
 * The layer table of docs/architecture.md, checked over the TypeScript imports of src/, providers/,
 * workers/, server/, bench/ and test/ (the benches seed with a test helper): every relative import and export-from (`import type` too) is
 * resolved to the folder it lands in (a top-level file of src/ is its own entry), and a folder may
 * import only folders of its own layer or below, with no circle between folders.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';

/** Bottom to top: a folder may import its own layer and the layers before it. */
const layers: readonly (readonly string[])[] = [
  // The SDK stands alone: it imports nothing of the product, and anything may use it.
  ['packages'],
  ['src/paths.ts', 'src/config.ts', 'src/errors.ts'],
  ['src/domain'],
  ['src/log.ts', 'src/metrics.ts'],
  ['src/http'],
  ['providers'],
  ['src/db'],
  ['src/security', 'src/queue', 'src/audit', 'src/request-log'],
  ['src/history', 'src/verification', 'src/usage'],
  ['src/presenters'],
  ['src/delivery'],
  ['src/health'],
  ['src/monitoring'],
  ['src/evaluation'],
  ['src/webhooks'],
  ['src/runs'],
  ['src/ingest', 'src/vehicles', 'src/maintenance'],
  ['src/cpu-pool'],
  ['src/web'],
  ['src/api-keys', 'src/dry-run', 'src/console-users'],
  ['src/console'],
  ['src/api'],
  ['src/cli', 'workers', 'server', 'bench', 'test'],
];

/**
 * Edges that break the table and are still being fixed, as `from -> to`. The test fails when one
 * of them no longer breaks it, so the list only shrinks; empty once issue 17 is done.
 */
const pendingViolations: readonly string[] = [];

const roots = ['src', 'providers', 'workers', 'server', 'bench', 'test', 'packages'];

const layerOf = new Map(layers.flatMap((folders, level) => folders.map((folder) => [folder, level] as const)));

function sourceFiles(folder: string): string[] {
  return readdirSync(join(projectRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    // Installed packages and build output are not the code's own sources.
    if (entry.isDirectory()) return ['node_modules', 'dist'].includes(entry.name) ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The table's entry a repository path belongs to: `src/<folder>`, a top-level file of src/, or a root. */
function folderOf(path: string): string {
  const parts = path.split('/');
  return parts[0] === 'src' ? `src/${parts[1]}` : parts[0]!;
}

// `import … from './x.js'`, `import type …`, `export … from`, `import './x.js'` and `import('./x.js')`.
const specifier = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

interface Edge {
  from: string;
  to: string;
  /** One import that makes the edge, for the message. */
  example: string;
}

function folderEdges(): Edge[] {
  const edges = new Map<string, Edge>();
  for (const file of roots.flatMap(sourceFiles)) {
    const text = readFileSync(join(projectRoot, file), 'utf8');
    for (const [, spec] of text.matchAll(specifier)) {
      const target = relative(projectRoot, resolve(projectRoot, dirname(file), spec!.replace(/\.js$/, '.ts')))
        .split(sep)
        .join('/');
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to && !edges.has(`${from} -> ${to}`)) {
        edges.set(`${from} -> ${to}`, { from, to, example: `${file} imports ${spec}` });
      }
    }
  }
  return [...edges.values()];
}

/** Folders that reach each other (Tarjan's strongly connected components of more than one folder). */
function circles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    for (const to of next.get(folder) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(folder, Math.min(low.get(folder)!, low.get(to)!));
      } else if (stack.includes(to)) {
        low.set(folder, Math.min(low.get(folder)!, index.get(to)!));
      }
    }
    if (low.get(folder) === index.get(folder)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== folder);
      if (component.length > 1) found.push(component);
    }
  };
  for (const folder of next.keys()) if (!index.has(folder)) visit(folder);
  return found;
}

const edges = folderEdges();

/**
 * Every edge that breaks the table: upward, or inside a circle. A circle that is not made by an
 * upward edge runs between folders of one layer, so circles are looked for among the rest.
 */
function violations(): Edge[] {
  // A folder outside the table counts as the top: nothing may import it.
  const layer = (folder: string) => layerOf.get(folder) ?? layers.length;
  const upward = edges.filter((edge) => layer(edge.to) > layer(edge.from));
  const level = edges.filter((edge) => !upward.includes(edge));
  const inCircle = circles(level).flatMap((component) =>
    level.filter((edge) => component.includes(edge.from) && component.includes(edge.to)),
  );
  return [...upward, ...inCircle];
}

describe('architecture (docs/architecture.md)', () => {
  it('places every folder of the code in the layer table', () => {
    const folders = new Set(roots.flatMap(sourceFiles).map(folderOf));
    const missing = [...folders].filter((folder) => !layerOf.has(folder));
    expect(missing, 'folders missing from the layer table in test/unit/architecture.test.ts').toEqual([]);
    const gone = [...layerOf.keys()].filter((folder) => !folders.has(folder));
    expect(gone, 'layer table entries with no code').toEqual([]);
  });

  it('imports only point down, and no folders import each other in a circle', () => {
    const found = violations();
    const unexpected = found
      .filter((edge) => !pendingViolations.includes(`${edge.from} -> ${edge.to}`))
      .map((edge) => `${edge.from} -> ${edge.to} (${edge.example})`);
    expect(unexpected, 'upward or circular imports').toEqual([]);
    const fixed = pendingViolations.filter(
      (pending) => !found.some((edge) => `${edge.from} -> ${edge.to}` === pending),
    );
    expect(fixed, 'fixed: remove them from pendingViolations').toEqual([]);
  });

  it('names every folder of the table in docs/architecture.md', () => {
    const doc = readFileSync(join(projectRoot, 'docs', 'architecture.md'), 'utf8');
    const unnamed = [...layerOf.keys()].filter((folder) => !doc.includes(`\`${folder}`));
    expect(unnamed, 'folders docs/architecture.md does not name').toEqual([]);
  });
});
