/**
 * `npm run demo` as a user runs it: the built `node dist/server/demo.js` (`npm test` builds first)
 * as a process of its own, on a fresh database and Redis prefix. It prints its API key and curl
 * lines; one printed endpoint answers with the printed key; its receiver prints a run event whose
 * signature it verified; SIGTERM stops it cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { testSecretsKey } from '../helpers/app.js';
import { createTestDatabase, testRedisPrefix, type TestDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/processes.js';

let database: TestDatabase;
let demo: ChildProcess;
let stdout = '';
let stderr = '';

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** What the demo has printed, once it matches (or the test's output when it does not). */
async function printed(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  await expect
    .poll(
      () => {
        if (demo.exitCode !== null) throw new Error(`the demo exited (${demo.exitCode}): ${stderr || stdout}`);
        return (match = pattern.exec(stdout));
      },
      { timeout: timeoutMs, interval: 100, message: `demo output ${pattern}:\n${stdout}\n${stderr}` },
    )
    .not.toBeNull();
  return match!;
}

beforeAll(async () => {
  database = await createTestDatabase();
  demo = spawn(process.execPath, [join(projectRoot, 'dist/server/demo.js')], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      REDIS_URL: inject('redisUrl'),
      REDIS_CLUSTER: String(inject('redisCluster')),
      REDIS_PREFIX: testRedisPrefix(),
      SECRETS_KEY: testSecretsKey,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  demo.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
});
afterAll(async () => {
  if (demo.exitCode === null && demo.signalCode === null) demo.kill('SIGKILL');
  await exited(demo);
  await database.drop();
});

describe('npm run demo', () => {
  it('prints its key and curl lines that work, verifies the webhooks it receives, and stops cleanly on SIGTERM', async () => {
    const [, key] = await printed(/^API key, shown once: (\S+)$/m, 20_000);
    const [, curlKey, url] = await printed(
      /^ {2}curl -s -H "Authorization: Bearer (\S+)" '(http:\/\/127\.0\.0\.1:\d+\/api\/v1\/vehicles\?include_total=true)'$/m,
      5_000,
    );
    expect(curlKey).toBe(key);
    const response = await fetch(url!, { headers: { authorization: `Bearer ${curlKey}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { success: boolean; data: Array<{ name: string }>; meta: any };
    expect(body.success).toBe(true);
    // The manually tracked van and the 12 simulated vehicles.
    expect(body.meta.total).toBe(13);
    expect(body.data.map((v) => v.name)).toContain('Van 3');

    // The service request the demo opens is delivered to its own receiver, which checks the signature.
    await printed(/^webhook run\.created \(signature verified\): run \S+ open\/requested, event_id \S+$/m, 15_000);
    expect(stdout).not.toMatch(/refused: signature/);

    demo.kill('SIGTERM');
    expect(await exited(demo)).toEqual({ code: 0, signal: null });
    expect(stdout + stderr).not.toMatch(/error while shutting down|"level":(50|60)/);
  }, 60_000);
});
