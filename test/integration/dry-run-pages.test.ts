/**
 * The dry run's window read in pages (db/monitoring-history.ts), on real Postgres, with pages far
 * smaller than the route's so that every path is crossed: each row of the window exactly once,
 * microsecond times at page edges included (the next page starts after the previous page's last
 * key as Postgres prints it), readings oldest first within a signal, nothing before the current
 * owner's span, nothing outside the window, and no more than the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventsOfPage,
  readingPagesBetween,
  readingsOfPage,
  vehicleEventPagesBetween,
} from '../../src/db/monitoring-history.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const base = Date.UTC(2026, 10, 20, 12);
/** A time `ms` after the base, plus `us` microseconds, as Postgres text (JavaScript dates stop at ms). */
const at = (ms: number, us = 0) => new Date(base + ms).toISOString().replace('Z', `${String(us).padStart(3, '0')}Z`);

let t: TestApp;
let vehicle: string;

beforeAll(async () => {
  t = await createTestApp();
  const company = await t.createCompany('Acme Fleet');
  vehicle = (await t.createVehicle(company.id)).id as string;
  // Readings of two signals and one the window does not ask for, a few sharing a millisecond.
  const readings: Array<[string, string, number]> = [];
  for (let i = 0; i < 23; i++) readings.push(['speed_kph', at(i * 1000, i % 3 === 0 ? 0 : 100 + i), i]);
  for (let i = 0; i < 7; i++)
    readings.push(['fuel_percent', at(i * 1000, 1), 50 - i], ['fuel_percent', at(i * 1000, 999), 40]);
  readings.push(['engine_rpm', at(5000), 900], ['speed_kph', at(-60_000), 1], ['speed_kph', at(3_600_000), 2]);
  await t.pool.query(
    `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, source)
     SELECT $1, s, a, v, 'generic' FROM unnest($2::text[], $3::timestamptz[], $4::float8[]) AS r(s, a, v)`,
    [vehicle, readings.map((r) => r[0]), readings.map((r) => r[1]), readings.map((r) => r[2])],
  );
  const events: Array<[string, string]> = [];
  for (let i = 0; i < 9; i++) events.push(['harsh_braking', at(i * 1000, 7)], ['harsh_acceleration', at(i * 500, 3)]);
  events.push(['harsh_braking', at(-60_000)]);
  await t.pool.query(
    `INSERT INTO vehicle_events (vehicle_id, kind, recorded_at, g, source)
     SELECT $1, k, a, 0.5, 'generic' FROM unnest($2::text[], $3::timestamptz[]) AS e(k, a)`,
    [vehicle, events.map((e) => e[0]), events.map((e) => e[1])],
  );
});
afterAll(() => t.close());

const since = new Date(base);
const until = new Date(base + 60_000);

async function readAll<Page>(pages: AsyncIterable<Page>): Promise<Page[]> {
  const all: Page[] = [];
  for await (const page of pages) all.push(page);
  return all;
}

describe('the window in pages', () => {
  it('reads every reading of the asked signals in the window once, a signal at a time, oldest first', async () => {
    const pages = await readAll(
      readingPagesBetween(t.pool, vehicle, ['speed_kph', 'fuel_percent'], since, until, 1000, 4),
    );
    expect(pages.every((page) => page.rows > 0 && page.rows <= 4)).toBe(true);
    const samples = pages.flatMap((page) => readingsOfPage(page.json));
    expect(samples.map((s) => s.signal)).toEqual([...Array(23).fill('speed_kph'), ...Array(14).fill('fuel_percent')]);
    expect(samples.filter((s) => s.signal === 'speed_kph').map((s) => s.value)).toEqual(
      Array.from({ length: 23 }, (_, i) => i),
    );
    // Both fuel readings of each millisecond, the earlier first: microseconds tell them apart.
    expect(samples.filter((s) => s.signal === 'fuel_percent').map((s) => s.value)).toEqual(
      Array.from({ length: 7 }, (_, i) => [50 - i, 40]).flat(),
    );
    for (const sample of samples) {
      expect(sample.recordedAt).toBeInstanceOf(Date);
      expect(sample.source).toBe('generic');
    }
    expect(samples[1]!.recordedAt.toISOString()).toBe(new Date(base + 1000).toISOString());
  });

  it('stops at the limit, and reads nothing from before the current owner got the vehicle', async () => {
    const limited = await readAll(readingPagesBetween(t.pool, vehicle, ['speed_kph'], since, until, 10, 4));
    expect(limited.map((page) => page.rows)).toEqual([4, 4, 2]);

    // A previous owner's span ended 10.5 s into the window: only later readings and events remain.
    const other = await t.createCompany('Previous Owner');
    await t.pool.query(
      `INSERT INTO vehicle_ownerships (vehicle_id, company_id, started_at, ended_at) VALUES ($1, $2, $3, $4)`,
      [vehicle, other.id, new Date(base - 86_400_000), new Date(base + 10_500)],
    );
    const floored = (await readAll(readingPagesBetween(t.pool, vehicle, ['speed_kph'], since, until, 1000, 4)))
      .flatMap((page) => readingsOfPage(page.json))
      .map((s) => s.value);
    expect(floored).toEqual(Array.from({ length: 12 }, (_, i) => i + 11));
    const events = (await readAll(vehicleEventPagesBetween(t.pool, vehicle, since, until, 1000, 3))).flatMap((page) =>
      eventsOfPage(page.json),
    );
    expect(events.every((e) => e.recordedAt.getTime() >= base + 10_500)).toBe(true);
    await t.pool.query(`DELETE FROM vehicle_ownerships WHERE company_id = $1`, [other.id]);
  });

  it('reads every provider event of the window once, by kind and time', async () => {
    const pages = await readAll(vehicleEventPagesBetween(t.pool, vehicle, since, until, 1000, 4));
    expect(pages.every((page) => page.rows > 0 && page.rows <= 4)).toBe(true);
    const events = pages.flatMap((page) => eventsOfPage(page.json));
    expect(events.map((e) => `${e.kind} ${e.recordedAt.getTime() - base}`)).toEqual([
      ...Array.from({ length: 9 }, (_, i) => `harsh_acceleration ${i * 500}`),
      ...Array.from({ length: 9 }, (_, i) => `harsh_braking ${i * 1000}`),
    ]);
    expect(events.every((e) => e.g === 0.5)).toBe(true);
    const limited = await readAll(vehicleEventPagesBetween(t.pool, vehicle, since, until, 5, 4));
    expect(limited.map((page) => page.rows)).toEqual([4, 1]);
  });
});
