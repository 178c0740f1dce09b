import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadHealthSubjects,
  lockUnchangedVehicles,
  recheckCompanyVehicles,
  unchangedHealthStates,
} from '../../src/db/health.js';
import { withTransaction } from '../../src/db/pool.js';
import { sweepHealth, type EvaluationSummary } from '../../src/evaluation/evaluate-vehicles.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let companyId: string;
const now = new Date('2026-11-22T12:00:00Z');
const minute = 60_000;
/** The four sweeps of the hour from `now`: each takes its quarter of the fleet in full (health/recheck.ts). */
const hourOfSweeps = [0, 15, 30, 45].map((m) => new Date(now.getTime() + m * minute));
/** Three pages of 500 and a part page. */
const vehicles = 1_600;

beforeAll(async () => {
  t = await createTestApp();
  const company = await t.createCompany();
  companyId = company.id;
  await t.pool.query(
    `INSERT INTO vehicles (company_id, name, telematics_provider, provider_vehicle_id, as_of, created_at)
     SELECT $1, 'V' || i, 'samsara', 'sam-' || i, $2::timestamptz - (i % 10) * interval '1 day', $2::timestamptz - interval '400 days'
     FROM generate_series(1, $3) AS i`,
    [company.id, now, vehicles],
  );
  await t.pool.query(
    `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, source)
     SELECT id, 'battery_voltage', as_of, 12.6, 'samsara' FROM vehicles WHERE company_id = $1`,
    [company.id],
  );
  // As ingest does: each signal's latest sample in the vehicle row (the sweep reads its time first).
  await t.pool.query(
    `UPDATE vehicles SET signals = jsonb_build_object('battery_voltage', 12.6, 'observed_at',
       jsonb_build_object('battery_voltage', to_char(as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
     WHERE company_id = $1`,
    [company.id],
  );
});
afterAll(() => t.close());

async function evaluatedVehicles(): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM vehicle_health_state WHERE fed_through ? 'battery_voltage'`,
  );
  return rows[0]!.n;
}

/** A sweep at `now` with each page's summary as it committed. */
async function sweepWithPages(concurrentPages: number) {
  const pages: EvaluationSummary[] = [];
  const result = await sweepHealth(
    t.pool,
    () => now,
    concurrentPages,
    async (page) => {
      pages.push(page);
    },
  );
  return { result, pages };
}

const pageSizes = (pages: readonly EvaluationSummary[]) => pages.map((page) => page.evaluated).sort((a, b) => a - b);

describe('sweepHealth with pages at once', () => {
  it('evaluates every vehicle once, each page in its own transaction, and reports every page', async () => {
    const { result, pages } = await sweepWithPages(3);
    expect(result.evaluated).toBe(vehicles);
    expect(pageSizes(pages)).toEqual([100, 500, 500, 500]);
    expect(new Set(pages.flatMap((page) => page.changed)).size).toBe(result.changed);
    expect(await evaluatedVehicles()).toBe(vehicles);

    // Nothing new and no rule names a time: each sweep of the next hour evaluates its quarter of
    // the fleet (by the id's last byte), together every vehicle once, and changes none.
    const quarters = [];
    for (const at of hourOfSweeps) quarters.push(await sweepHealth(t.pool, () => at, 3));
    for (const quarter of quarters) {
      expect(quarter.changed).toBe(0);
      expect(quarter.evaluated).toBeGreaterThan(vehicles / 4 - 100);
      expect(quarter.evaluated).toBeLessThan(vehicles / 4 + 100);
    }
    expect(quarters.reduce((sum, quarter) => sum + quarter.evaluated, 0)).toBe(vehicles);
  });

  it('writes nothing when nothing changed: not even a row lock on a vehicle', async () => {
    const rowVersions = async () =>
      (
        await t.pool.query<{ v: string }>(
          `SELECT string_agg(v.xmin::text || ':' || v.xmax::text || ':' || h.xmin::text, ',' ORDER BY v.id) AS v
           FROM vehicles v JOIN vehicle_health_state h ON h.vehicle_id = v.id`,
        )
      ).rows[0]!.v;
    const before = await rowVersions();
    let evaluated = 0;
    for (const at of hourOfSweeps) {
      const sweep = await sweepHealth(t.pool, () => at, 2);
      expect(sweep.changed).toBe(0);
      evaluated += sweep.evaluated;
    }
    expect(evaluated).toBe(vehicles);
    expect(await rowVersions()).toBe(before);
  });

  it('leaves out a vehicle held by another transaction, or written or evaluated since the sweep read it', async () => {
    const { rows } = await t.pool.query<{ id: string }>(`SELECT id FROM vehicles ORDER BY id LIMIT 4`);
    const [held, evaluated, ingested, untouched] = rows.map((r) => r.id) as [string, string, string, string];
    const read = await loadHealthSubjects(t.pool, [held, evaluated, ingested, untouched], { inputsVersion: false });
    // Ingest writes the vehicle's latest state after the read.
    await t.pool.query(`UPDATE vehicles SET as_of = $2 WHERE id = $1`, [ingested, now]);
    // Another evaluation of `evaluated` rewrites its state row after the read (its health unchanged).
    await withTransaction(t.pool, async (tx) => {
      await tx.query(`SELECT 1 FROM vehicles WHERE id = $1 FOR NO KEY UPDATE`, [evaluated]);
      await tx.query(`UPDATE vehicle_health_state SET evaluated_at = $2 WHERE vehicle_id = $1`, [evaluated, now]);
    });
    await withTransaction(t.pool, async (holder) => {
      await holder.query(`SELECT 1 FROM vehicles WHERE id = $1 FOR NO KEY UPDATE`, [held]);
      await withTransaction(t.pool, async (tx) => {
        const locked = await lockUnchangedVehicles(tx, read);
        // The vehicle row of `evaluated` did not move (its health did not change), its state row did.
        expect(locked.sort()).toEqual([evaluated, untouched].sort());
        expect(
          await unchangedHealthStates(
            tx,
            read.filter((s) => locked.includes(s.id)),
          ),
        ).toEqual([untouched]);
      });
    });
  });

  it('stops at a failed page: no page starts after it, and the sweep rejects with its error', async () => {
    // Every vehicle due (as after a change of its company's overrides): four pages.
    await recheckCompanyVehicles(t.pool, companyId);
    let pages = 0;
    await expect(
      sweepHealth(
        t.pool,
        () => now,
        2,
        async () => {
          if (++pages === 1) throw new Error('after page failed');
        },
      ),
    ).rejects.toThrow('after page failed');
    // The other lane finishes the page it holds; the remaining pages of four never start.
    expect(pages).toBeLessThanOrEqual(2);
    // A failed sweep lets go of its lock: the next one runs.
    expect((await sweepHealth(t.pool, () => now, 2)).skipped).toBe(false);
  });

  it('runs one at a time: a sweep started while another runs (a stalled job taken back, an overrun) does nothing', async () => {
    await recheckCompanyVehicles(t.pool, companyId);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstPage!: () => void;
    const started = new Promise<void>((resolve) => (firstPage = resolve));
    const first = sweepHealth(
      t.pool,
      () => now,
      1,
      async () => {
        firstPage();
        await held;
      },
    );
    await started;
    expect(await sweepHealth(t.pool, () => now, 2)).toEqual({ evaluated: 0, changed: 0, skipped: true });
    release();
    expect(await first).toEqual({ evaluated: vehicles, changed: 0, skipped: false });
    expect((await sweepHealth(t.pool, () => now, 2)).skipped).toBe(false);
  });

  it('pages monitored vehicles by 50 and the others by 500', async () => {
    await recheckCompanyVehicles(t.pool, companyId);
    const { rows } = await t.pool.query<{ id: string }>(`SELECT id FROM vehicles ORDER BY id LIMIT 60`);
    const monitored = rows.map((r) => r.id);
    await t.pool.query(
      `INSERT INTO monitoring_subscriptions (company_id, vehicle_id, webhook_url, events, tier, secret_ciphertext)
       SELECT $1, id, 'https://example.com/hook', ARRAY['oil_change_needed'], 'basic', '\\x00' FROM unnest($2::uuid[]) AS id`,
      [companyId, monitored],
    );
    const { result, pages } = await sweepWithPages(2);
    expect(result.evaluated).toBe(vehicles);
    // 1,540 unmonitored vehicles in pages of 500, then the 60 monitored ones in pages of 50.
    expect(pageSizes(pages)).toEqual([10, 40, 50, 500, 500, 500]);
  });
});
