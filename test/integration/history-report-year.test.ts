/**
 * A vehicle with a year of readings (about 107,000): the report reads the rollups, not the raw
 * readings. Latency is printed, not asserted (speed is measured by `npm run bench`); what is
 * asserted is that the figures come out of the rollups right.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHistoryReport } from '../../src/history/build-report.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { seedDrivingDays } from '../helpers/history-seed.js';

const vin = '1M8GDM9AXKP042788';
const now = new Date('2026-11-24T12:00:00Z');
let t: TestApp;
let stored = 0;

beforeAll(async () => {
  t = await createTestApp();
  const company = await t.createCompany();
  const vehicle = await t.createVehicle(company.id, { vin, make: 'Ford', model: 'Transit', year: 2022 });
  const started = performance.now();
  stored = await seedDrivingDays(t.pool, vehicle.id, { end: now, days: 365 });
  console.log(`seeded ${stored} readings in ${Math.round(performance.now() - started)} ms`);
}, 120_000);
afterAll(() => t.close());

describe('a year of readings', () => {
  it('seeds about 100k readings and reports them from the rollups', async () => {
    expect(stored).toBe(365 * 2 * 147);
    for (const tier of ['basic', 'lifetime'] as const) {
      await buildHistoryReport(t.pool, { vin, tier, reportId: 'warm', now });
      const started = performance.now();
      const report = (await buildHistoryReport(t.pool, { vin, tier, reportId: 'r', now }))!;
      console.log(`${tier} report: ${(performance.now() - started).toFixed(1)} ms`);
      expect(report.odometer_integrity.status).toBe('consistent');
      expect(report.lifetime_metrics.harsh_braking_events).toBe(tier === 'basic' ? 46 : 92);
      // 1 of 3 samples at 95 km/h, 2 at 55: 68.3 km/h = 42.5 mph; a third of moving time on the highway.
      expect(report.lifetime_metrics).toMatchObject({ avg_speed: 42.5, highway_percentage: 33.3 });
      expect(report.lifetime_metrics.driving_score).toBeGreaterThan(90);
    }
  });
});
