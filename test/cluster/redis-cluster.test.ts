/**
 * Scale-out on a real Redis Cluster: three masters on loopback (scripts/redis-cluster.sh), and the
 * queue, worker, ingest, webhook and API-limit integration tests run against it unchanged (the
 * `{…}` hash tag of REDIS_PREFIX keeps each queue's keys in one slot). A nested vitest run, so the
 * same files also run against a single Redis in the main run.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const script = `${root}scripts/redis-cluster.sh`;

/** Whether 127.0.0.1:port can be bound now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Three free ports in a row whose cluster bus ports (10000 above) are free too, drawn at random
 * below the kernel's ephemeral range (from 32768), so two runs on one machine rarely meet; when
 * they do, the script refuses a port it does not own and the cluster starts again elsewhere.
 */
async function freeFirstPort(): Promise<number> {
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * 2_000);
    const ports = [0, 1, 2].flatMap((i) => [first + i, first + i + 10_000]);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return first;
  }
}

let firstPort = 0;
let dir = '';

/** The suites that drive queues and workers end to end. */
const suites = [
  'test/integration/queue-workers.test.ts',
  'test/integration/maintenance-worker.test.ts',
  'test/integration/ingest-push.test.ts',
  'test/integration/ingest-pull.test.ts',
  'test/integration/refresh.test.ts',
  'test/integration/health.test.ts',
  'test/integration/webhooks.test.ts',
  'test/integration/webhooks-reliability.test.ts',
  'test/integration/webhooks-lanes.test.ts',
  'test/integration/auth.test.ts',
  'test/integration/api-key-cache.test.ts',
  'test/integration/operator-status.test.ts',
  'test/integration/console-sign-in.test.ts',
];

describe('Redis Cluster (three masters)', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-redis-cluster-'));
    for (let attempt = 1; ; attempt++) {
      firstPort = await freeFirstPort();
      try {
        await run(script, ['start', String(firstPort), dir]);
        return;
      } catch (error) {
        // Exit 3: a port was taken between the check and the start.
        if ((error as { code?: number }).code !== 3 || attempt === 5) throw error;
      }
    }
  }, 60_000);
  afterAll(async () => {
    await run(script, ['stop', String(firstPort), dir]);
  });

  it('is a cluster whose slots are spread over three masters', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: firstPort }]);
    try {
      const masters = (await cluster.cluster('SHARDS')) as unknown[];
      expect(masters).toHaveLength(3);
    } finally {
      cluster.disconnect();
    }
  });

  it('runs the queue and worker integration suites unchanged', async () => {
    // One file at a time: this run shares the machine with the rest of the suite, which can slow
    // its 13 files past 300 s on two cores (85 s alone), hence the longer timeout.
    const child = spawn('npx', ['vitest', 'run', '--reporter=dot', '--maxWorkers=1', ...suites], {
      cwd: root,
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${firstPort}`, REDIS_CLUSTER: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const summary = /Tests\s+.*\n/.exec(output.replace(/\x1b\[[0-9;]*m/g, ''))?.[0] ?? '';
    console.log(`redis cluster: ${suites.length} files, ${summary.trim()}`);
    expect(code, output.slice(-4000)).toBe(0);
    expect(summary).toMatch(/\d+ passed/);
    expect(summary).not.toMatch(/failed/);
  }, 480_000);
});
