/**
 * Readings are stored by COPY, and a batch holding samples already stored takes the INSERT …
 * ON CONFLICT path instead (src/db/readings.ts). Replaying the same inbox rows through the real
 * job many times must neither hang the connection nor store a sample twice; each replay is
 * bounded by the test's own timeout, so a hang fails the test instead of stalling the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapters } from '../../providers/index.js';
import { processRowAlone } from '../../src/ingest/isolation.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, genericBatch, pushGeneric, readingCount } from '../helpers/ingest.js';

let t: TestApp;
let acme: { id: string; key: string };
let connection: { id: string; secret: string };

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
});
afterAll(async () => {
  await t.close();
});

async function pushed(vehicle: string, count: number, startMs: number): Promise<number> {
  const response = await pushGeneric(
    t,
    'generic',
    connection.id,
    connection.secret,
    genericBatch(vehicle, count, startMs),
  );
  expect(response.statusCode).toBe(202);
  return response.json().data.inbox_id;
}

/** Processes the row again as a replay does (processed rows included), in its own transaction. */
async function replay(inboxId: number): Promise<void> {
  const { outcome, parked } = await processRowAlone(t.pool, inboxId, adapters, true);
  expect(parked).toBeNull();
  expect(outcome.rows).toHaveLength(1);
}

describe('replaying batches through the COPY path', () => {
  it(
    'a small batch replayed 60 times stores each reading once and leaves the connection usable',
    { timeout: 120_000 },
    async () => {
      const truck = await t.createVehicle(acme.id, {
        provider_connection_id: connection.id,
        provider_vehicle_id: 'r-1',
      });
      const inboxId = await pushed('r-1', 1, Date.parse('2026-11-21T06:00:00Z'));
      for (let i = 0; i < 60; i++) {
        await replay(inboxId);
        expect(await readingCount(t, truck.id)).toBe(2);
      }
    },
  );

  it(
    'a batch large enough that the duplicate key fails the COPY while its data is still being sent, 50 times',
    { timeout: 300_000 },
    async () => {
      const truck = await t.createVehicle(acme.id, {
        provider_connection_id: connection.id,
        provider_vehicle_id: 'r-2',
      });
      // 4,000 readings, 8,000 samples: several hundred KB of COPY data, more than a socket buffer.
      const inboxId = await pushed('r-2', 4000, Date.parse('2026-11-21T00:00:00Z'));
      for (let i = 0; i < 50; i++) {
        await replay(inboxId);
        expect(await readingCount(t, truck.id)).toBe(8000);
      }
    },
  );

  it(
    'batches overlapping stored ones (half new, half replayed) store exactly the new half',
    { timeout: 120_000 },
    async () => {
      const truck = await t.createVehicle(acme.id, {
        provider_connection_id: connection.id,
        provider_vehicle_id: 'r-3',
      });
      const startMs = Date.parse('2026-11-22T00:00:00Z');
      await replay(await pushed('r-3', 100, startMs));
      for (let i = 1; i <= 50; i++) {
        // Readings 50·i … 50·i + 99: the first half stored by the previous batch.
        await replay(await pushed('r-3', 100, startMs + i * 50_000));
        expect(await readingCount(t, truck.id)).toBe(2 * (100 + 50 * i));
      }
    },
  );

  it('jobs replaying the same rows at once store each reading once', { timeout: 120_000 }, async () => {
    const truck = await t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: 'r-4' });
    const ids = await Promise.all(
      [0, 1, 2, 3].map((k) => pushed('r-4', 500, Date.parse('2026-11-23T00:00:00Z') + k * 250_000)),
    );
    for (let i = 0; i < 15; i++) {
      // Overlapping rows in four transactions at once: a COPY waits for a concurrent insert of the
      // same key, then fails over to the INSERT that skips it.
      await Promise.all(ids.map((id) => replay(id)));
      expect(await readingCount(t, truck.id)).toBe(2 * (500 + 3 * 250));
    }
  });
});
