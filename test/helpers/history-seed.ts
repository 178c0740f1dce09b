/**
 * A year (or any number of days) of realistic readings for one vehicle, written through the same
 * statements as the ingest worker (insertReadings, then the history rollups), 10 days per
 * transaction: about 106,000 readings a year in a few seconds. For the report's speed tests and
 * benches; the report then reads only the rollups.
 */
import { upsertReadingRollups } from '../../src/db/history-rollups.js';
import { withTransaction, type Pool } from '../../src/db/pool.js';
import { insertReadings, type ReadingRow } from '../../src/db/readings.js';
import { insertVehicleEvents, type EventRow } from '../../src/db/vehicle-state.js';

export interface SeedOptions {
  /** The last day seeded ends before this time. */
  end: Date;
  days: number;
  startMiles?: number;
  source?: string;
}

const kmPerMile = 1.609344;
const dayMs = 24 * 3600 * 1000;

/**
 * Two 45-minute trips a day (07:30 and 17:00 UTC): engine on and off, speed every 30 s, location
 * every minute, odometer every 5 minutes, about 30 miles a trip; a hard brake every fourth day.
 * Returns the number of readings stored.
 */
export async function seedDrivingDays(pool: Pool, vehicleId: string, options: SeedOptions): Promise<number> {
  const source = options.source ?? 'generic';
  let km = (options.startMiles ?? 20_000) * kmPerMile;
  let stored = 0;
  const firstDay = Math.floor(options.end.getTime() / dayMs) * dayMs - options.days * dayMs;
  for (let chunk = 0; chunk < options.days; chunk += 10) {
    const readings: ReadingRow[] = [];
    const events: EventRow[] = [];
    const add = (at: number, signal: string, value: unknown) =>
      readings.push({
        vehicleId,
        signal,
        recordedAt: new Date(at),
        valueNum: typeof value === 'number' ? value : null,
        valueJson: typeof value === 'number' ? null : value,
        source,
      });
    for (let d = chunk; d < Math.min(chunk + 10, options.days); d++) {
      const dayStart = firstDay + d * dayMs;
      for (const tripStart of [dayStart + 7.5 * 3600_000, dayStart + 17 * 3600_000]) {
        add(tripStart, 'engine_state', 'on');
        for (let s = 0; s < 90; s++) {
          const at = tripStart + s * 30_000;
          const kph = s % 3 === 0 ? 95 : 55;
          add(at, 'speed_kph', kph);
          if (s % 2 === 0) add(at, 'location', { lat: 41.88 + s / 1000, lon: -87.63, heading: 90 });
          if (s % 10 === 0) add(at, 'odometer_km', km);
          km += (kph * 30) / 3600;
        }
        add(tripStart + 45 * 60_000, 'engine_state', 'off');
        add(tripStart + 45 * 60_000, 'odometer_km', km);
      }
      if (d % 4 === 0) {
        events.push({ vehicleId, kind: 'hard_brake', recordedAt: new Date(dayStart + 8 * 3600_000), g: 0.42, source });
      }
    }
    stored += await withTransaction(pool, async (tx) => {
      const result = await insertReadings(tx, readings);
      await upsertReadingRollups(tx, result.rolled);
      await insertVehicleEvents(tx, events);
      return result.count;
    });
  }
  return stored;
}
