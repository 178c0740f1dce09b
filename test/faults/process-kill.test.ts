/**
 * kill -9 of an API process, and separately of a worker process, in the middle of a stream of
 * 50,000 readings pushed by two companies (issue 8, "Done when"). The pusher sends again every
 * push that was not answered 202, as a provider does; a new process takes over; Postgres ends
 * with exactly the readings pushed, each once, and the latest state of their newest values.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ProcessGroup, serviceEnv } from '../helpers/processes.js';
import {
  countLatestState,
  countReadings,
  createStreamConnection,
  inboxSummary,
  planPushStream,
  startPushStream,
  type PushStreamPlan,
} from '../helpers/push-stream.js';

const pushes = 500;
const readingsPerPush = 100;
const readings = pushes * readingsPerPush;
const vehiclesPerCompany = 5;
// Two companies × five vehicles × two signals.
const latestPairs = 2 * vehiclesPerCompany * 2;

const processes = new ProcessGroup();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterEach(async () => {
  await processes.killAll();
});
afterAll(async () => {
  await processes.killAll();
  await t?.close();
});

/** Two companies with a generic connection each; the pushes take turns between them. */
async function plannedStream(label: string): Promise<PushStreamPlan & { connectionIds: string[] }> {
  const connections = [
    await createStreamConnection(t, `${label}-a`, vehiclesPerCompany),
    await createStreamConnection(t, `${label}-b`, vehiclesPerCompany),
  ];
  const plan = planPushStream(connections, {
    pushes,
    readingsPerPush,
    start: new Date(Date.now() - 2 * 24 * 3600 * 1000),
  });
  return { ...plan, connectionIds: connections.map((c) => c.id) };
}

async function expectEveryReadingStoredOnce(plan: PushStreamPlan & { connectionIds: string[] }) {
  // The readings primary key (vehicle, signal, time) makes a duplicate impossible to store, so
  // "exactly the pushed readings" is: as many rows as readings pushed, each one of them.
  await expect
    .poll(() => countReadings(t.pool, plan.readings), { timeout: 90_000, interval: 250 })
    .toEqual({ stored: readings, matching: readings });
  // Every push is in the inbox (a push stored before its answer was lost is there twice), all processed.
  const inbox = await inboxSummary(t.pool, plan.connectionIds, readingsPerPush);
  expect(inbox).toMatchObject({ payloads: pushes, pending: 0, errors: 0, payloadsWithAllSamples: pushes });
  expect(inbox.rows).toBeGreaterThanOrEqual(pushes);
  // The latest state holds the newest reading of each vehicle and signal, whatever order batches ran in.
  expect(await countLatestState(t.pool, plan.readings)).toEqual({
    latest: latestPairs,
    signals: latestPairs,
    matching: latestPairs,
  });
}

describe('kill -9 during a 50,000-reading push stream', () => {
  it('of the API process: unanswered pushes are sent again to its replacement; nothing lost or doubled', async () => {
    const plan = await plannedStream('api-kill');
    await processes.start(['worker', 'ingest', 'health'], serviceEnv(t));
    let api = await processes.start(['api'], serviceEnv(t));
    const stream = startPushStream(plan.pushes, { apiUrl: () => api.url });

    await stream.until(pushes / 3);
    await api.kill();
    // The supervisor's replacement, on the same address; the pusher retries until it answers.
    api = await processes.start(['api'], serviceEnv(t), api.port);
    const result = await stream.done;

    expect(result.accepted).toBe(pushes);
    // Pushes were in flight or refused while no API ran: the kill really interrupted the stream.
    expect(result.retries).toBeGreaterThan(0);
    await expectEveryReadingStoredOnce(plan);
  }, 150_000);

  it('of the worker process: its unfinished batches are redone by a new worker; nothing lost or doubled', async () => {
    const plan = await plannedStream('worker-kill');
    const api = await processes.start(['api'], serviceEnv(t));
    const first = await processes.start(['worker', 'ingest', 'health'], serviceEnv(t));
    const stream = startPushStream(plan.pushes, { apiUrl: () => api.url });

    await stream.until(pushes / 3);
    // Killed while it holds ingest jobs, inside their open transactions.
    await expect
      .poll(() => t.queues.queue('ingest').getActiveCount(), { timeout: 20_000, interval: 5 })
      .toBeGreaterThan(0);
    await first.kill();
    const atKill = await countReadings(t.pool, plan.readings);
    expect(atKill.stored).toBeLessThan(readings);

    await processes.start(['worker', 'ingest', 'health'], serviceEnv(t));
    const result = await stream.done;
    expect(result.accepted).toBe(pushes);
    await expectEveryReadingStoredOnce(plan);
  }, 150_000);
});
