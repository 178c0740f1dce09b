/**
 * WORKER_HEAP_MIB on a real worker process (`node dist/server/main.js worker maintenance`): the
 * process started is a launcher that runs the worker under `--max-old-space-size`, relays SIGTERM
 * and exits with it; killed outright, it takes the worker with it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ProcessGroup, serviceEnv } from '../helpers/processes.js';

const processes = new ProcessGroup();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
}, 90_000);
afterAll(async () => {
  await processes.killAll();
  await t.close();
});

/** The one process `pid` started, and its command line. */
function cappedChild(pid: number): { pid: number; args: string[] } {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  expect(children).toHaveLength(1);
  const args = readFileSync(`/proc/${children[0]}/cmdline`, 'utf8').split('\0').filter(Boolean);
  return { pid: children[0]!, args };
}

async function gone(pid: number): Promise<boolean> {
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (!existsSync(`/proc/${pid}`)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('the worker heap cap', () => {
  it('runs the worker under the cap; SIGTERM stops both with exit code 0', async () => {
    const worker = await processes.start(['worker', 'maintenance'], serviceEnv(t, { WORKER_HEAP_MIB: '96' }));
    const child = cappedChild(worker.pid);
    expect(child.args).toContain('--max-old-space-size=96');
    expect(child.args.slice(-2)).toEqual(['worker', 'maintenance']);
    expect((await worker.readyz()).status).toBe(200);
    expect(await worker.stop()).toBe(0);
    expect(await gone(child.pid)).toBe(true);
  }, 90_000);

  it('ends the worker when its launcher is killed outright', async () => {
    const worker = await processes.start(['worker', 'maintenance'], serviceEnv(t, { WORKER_HEAP_MIB: '96' }));
    const child = cappedChild(worker.pid);
    await worker.kill();
    expect(await gone(child.pid)).toBe(true);
  }, 90_000);

  it('starts no launcher with WORKER_HEAP_MIB=0', async () => {
    const worker = await processes.start(['worker', 'maintenance'], serviceEnv(t));
    expect(readFileSync(`/proc/${worker.pid}/task/${worker.pid}/children`, 'utf8').trim()).toBe('');
    expect(await worker.stop()).toBe(0);
  }, 90_000);
});
