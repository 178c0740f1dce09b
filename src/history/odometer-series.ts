/**
 * Odometer points from the daily checkpoints (odometer_daily), the distance series the report's
 * miles come from, and monthly mileage. Pure.
 *
 * The distance series is the ECU odometer (signal odometer_km, any source: provider or manual);
 * a vehicle that never reported one falls back to its GPS-derived odometer. Across several vehicle
 * rows of one VIN it is one series: they are the same car and the same odometer.
 */
import type { OdometerDay, OdometerReadingRow } from '../db/history.js';
import { integrityLimits, type OdometerPoint } from './integrity.js';

/** The (vehicle, day) pairs whose checkpoint shows a drop inside the day: their raw readings are loaded. */
export function daysToInspect(days: readonly OdometerDay[]): Array<{ vehicleId: string; day: string }> {
  const tolerance = integrityLimits.backwardsToleranceKm;
  const wanted = new Map<string, { vehicleId: string; day: string }>();
  for (const d of days) {
    if (d.maxKm > d.lastKm + tolerance || d.minKm < d.firstKm - tolerance) {
      wanted.set(`${d.vehicleId}\u0000${d.day}`, { vehicleId: d.vehicleId, day: d.day });
    }
  }
  return [...wanted.values()];
}

/**
 * The points of the checkpoints (first and last reading of each day), except that a day whose
 * raw readings were loaded contributes all of them instead; readings before `from` are left out.
 */
export function odometerPoints(
  days: readonly OdometerDay[],
  dayReadings: readonly OdometerReadingRow[],
  from: Date | null,
): OdometerPoint[] {
  const inspected = new Set(dayReadings.map((r) => `${r.vehicleId}\u0000${r.at.toISOString().slice(0, 10)}`));
  const points: OdometerPoint[] = [];
  const keep = (at: Date) => from === null || at.getTime() >= from.getTime();
  for (const d of days) {
    if (inspected.has(`${d.vehicleId}\u0000${d.day}`)) continue;
    if (keep(d.firstAt)) points.push({ signal: d.signal, source: d.source, at: d.firstAt, km: d.firstKm });
    if (d.lastAt.getTime() !== d.firstAt.getTime() && keep(d.lastAt)) {
      points.push({ signal: d.signal, source: d.source, at: d.lastAt, km: d.lastKm });
    }
  }
  for (const r of dayReadings) {
    if (keep(r.at)) points.push({ signal: r.signal, source: r.source, at: r.at, km: r.km });
  }
  return points.sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** The points miles are measured on (see the file comment), in time order. */
export function distanceSeries(points: readonly OdometerPoint[]): OdometerPoint[] {
  const ecu = points.filter((p) => p.signal === 'odometer_km');
  return ecu.length > 0 ? ecu : points.filter((p) => p.signal === 'gps_odometer_km');
}

/** The last reading at or before `at`, or else the first after it (null for an empty series). */
export function odometerKmAt(series: readonly OdometerPoint[], at: Date): number | null {
  let found: OdometerPoint | null = null;
  for (const point of series) {
    if (point.at.getTime() <= at.getTime()) found = point;
    else return found ? found.km : point.km;
  }
  return found ? found.km : null;
}

/**
 * Distance per UTC month with readings: the month's last reading minus the previous month's last
 * (the month's first for the first month). A month whose readings end lower counts 0: the drop is
 * an integrity flag, not negative driving.
 */
export function monthlyKm(series: readonly OdometerPoint[]): Array<{ month: string; km: number }> {
  const months: Array<{ month: string; firstKm: number; lastKm: number }> = [];
  for (const point of series) {
    const month = point.at.toISOString().slice(0, 7);
    const current = months[months.length - 1];
    if (current && current.month === month) current.lastKm = point.km;
    else months.push({ month, firstKm: point.km, lastKm: point.km });
  }
  return months.map((m, i) => ({
    month: m.month,
    km: Math.max(0, m.lastKm - (i === 0 ? m.firstKm : months[i - 1]!.lastKm)),
  }));
}
