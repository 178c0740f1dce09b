import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suites that start processes of their own (a Redis Cluster child run, kills, restarts) take
 * 30–150 s each. Vitest orders a run without a results cache (every CI run: `npm ci` removes it)
 * by file size, which started the longest one seven minutes in and left two workers idle while it
 * finished; started first, they overlap with the short files instead.
 */
const longSuites = ['/test/cluster/', '/test/faults/'];

class LongSuitesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = longSuites.findIndex((dir) => file.moduleId.includes(dir));
      return index === -1 ? longSuites.length : index;
    };
    // Array sort is stable: within a rank, Vitest's own order stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: a few files at a time keeps Postgres, Redis and the test processes from starving each other.
    maxWorkers: 3,
    sequence: { sequencer: LongSuitesFirst },
  },
});
