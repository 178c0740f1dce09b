/**
 * The report's sections, each a pure function of the loaded records (docs/history-report.md has
 * every definition). Miles everywhere; figures rounded for presentation only.
 */
import type { CompletedRunRow, DrivingDay, IncidentEventRow, ServiceEntryRow } from '../db/history.js';
import type { OwnershipSpan } from '../db/ownership.js';
import { nearestPlace, placeLabel } from '../domain/places.js';
import { kmPerMile, kmToMiles, msPerDay } from '../domain/units.js';
import { defaultHealthConfig } from '../domain/health-config.js';
import { airbagIncidentMs, impactG, impactWindowMs, majorImpactG } from '../domain/incidents.js';
import { isTelematicsSource } from '../domain/sample.js';
import { roundMiles, type OdometerPoint } from './integrity.js';
import { odometerKmAt } from './odometer-series.js';
import type { HistoryReport } from './types.js';

type Metrics = HistoryReport['lifetime_metrics'];
type ServiceItem = HistoryReport['service_history'][number];
type Incident = NonNullable<HistoryReport['incidents']>[number];
type Ownership = NonNullable<HistoryReport['ownership']>[number];
type Predictions = NonNullable<HistoryReport['predictive_insights']>;

const msPerYear = 365.25 * msPerDay;
const round1 = (value: number) => Math.round(value * 10) / 10;
const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The driving score needs at least this distance: fewer miles say nothing about a driver. */
export const minScoreMiles = 100;
/** Score points lost per harsh event per 100 miles (per distance, as Damoov and Bouncie: docs/history-report.md). */
export const scoreWeights = { hardBrake: 5, hardAccel: 3 } as const;
/** The average miles per year needs readings at least this far apart. */
export const minYearlyAverageDays = 30;

/** 0–100, or null below `minScoreMiles`: 100 − Σ weight × events per 100 miles, clamped. */
export function drivingScore(milesDriven: number, hardBrakes: number, hardAccels: number): number | null {
  if (milesDriven < minScoreMiles) return null;
  const penalty = ((scoreWeights.hardBrake * hardBrakes + scoreWeights.hardAccel * hardAccels) / milesDriven) * 100;
  return Math.round(Math.min(100, Math.max(0, 100 - penalty)));
}

export function lifetimeMetrics(
  series: readonly OdometerPoint[],
  driving: readonly DrivingDay[],
  firstRecorded: Date | null,
): Metrics {
  const first = series[0];
  const last = series[series.length - 1];
  const drivenMiles = first && last ? Math.max(0, kmToMiles(last.km - first.km)) : 0;
  const spanMs = first && last ? last.at.getTime() - first.at.getTime() : 0;
  const sum = (pick: (d: DrivingDay) => number) => driving.reduce((total, d) => total + pick(d), 0);
  const hardBrakes = sum((d) => d.hardBrakes);
  const hardAccels = sum((d) => d.hardAccels);
  const moving = sum((d) => d.movingSamples);
  return {
    total_miles: last ? roundMiles(kmToMiles(last.km)) : null,
    first_recorded: firstRecorded ? isoDay(firstRecorded) : null,
    avg_miles_per_year:
      spanMs >= minYearlyAverageDays * msPerDay ? Math.round(drivenMiles / (spanMs / msPerYear)) : null,
    driving_score: first ? drivingScore(drivenMiles, hardBrakes, hardAccels) : null,
    harsh_braking_events: hardBrakes,
    rapid_acceleration_events: hardAccels,
    avg_speed: moving > 0 ? round1(sum((d) => d.movingKphSum) / moving / kmPerMile) : null,
    highway_percentage: moving > 0 ? round1((sum((d) => d.highwaySamples) / moving) * 100) : null,
  };
}

/** A service mileage agrees with telematics within this many miles, or 1 % of it if more. */
export const verifySlackMiles = 10;

/**
 * Verified: a telematics (not hand-typed) odometer reading within a day of the service agrees
 * with its mileage, the nearest such reading in time compared.
 */
export function verifiedByTelematics(points: readonly OdometerPoint[], at: Date, mileageKm: number | null): boolean {
  if (mileageKm === null) return false;
  let nearest: OdometerPoint | null = null;
  for (const point of points) {
    if (!isTelematicsSource(point.source)) continue;
    const gap = Math.abs(point.at.getTime() - at.getTime());
    if (gap > msPerDay) continue;
    if (!nearest || gap < Math.abs(nearest.at.getTime() - at.getTime())) nearest = point;
  }
  if (!nearest) return false;
  const slackMiles = Math.max(verifySlackMiles, 0.01 * kmToMiles(mileageKm));
  return Math.abs(kmToMiles(nearest.km - mileageKm)) <= slackMiles;
}

export function serviceHistory(
  runs: readonly CompletedRunRow[],
  entries: readonly ServiceEntryRow[],
  points: readonly OdometerPoint[],
): ServiceItem[] {
  const records = [
    ...runs.map((run) => ({
      at: run.completedAt,
      type: run.itemTypes.length > 0 ? [...run.itemTypes].sort().join(', ') : (run.title ?? 'service'),
      km: run.completedOdometerKm,
      shop: run.shop,
    })),
    ...entries.map((entry) => ({ at: entry.performedAt, type: entry.type, km: entry.odometerKm, shop: null })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime());
  return records.map((r) => ({
    date: isoDay(r.at),
    type: r.type,
    mileage: r.km === null ? null : roundMiles(kmToMiles(r.km)),
    shop: r.shop,
    verified: verifiedByTelematics(points, r.at, r.km),
  }));
}

/**
 * City level, never a street: the nearest place within placeRadiusKm ("Austin, Texas, US",
 * docs/places.md), or where none is that near, "near 30.3° N, 97.7° W" (a tenth of a degree,
 * about 11 km).
 */
export function cityLevel(lat: number | null, lon: number | null): string | null {
  if (lat === null || lon === null || !Number.isFinite(lat) || !Number.isFinite(lon)) return null;
  const place = nearestPlace({ lat, lon });
  if (place) return placeLabel(place);
  const part = (value: number, positive: string, negative: string) =>
    `${Math.abs(value).toFixed(1)}° ${value >= 0 ? positive : negative}`;
  return `near ${part(lat, 'N', 'S')}, ${part(lon, 'E', 'W')}`;
}

/**
 * Impacts, airbag deployments and hard decelerations grouped into incidents: the events within
 * 30 s of an incident's first (an airbag within 10 minutes) belong to it, as the monitoring
 * detectors count them.
 */
export function incidents(events: readonly IncidentEventRow[]): Incident[] {
  const groups: IncidentEventRow[][] = [];
  for (const event of [...events].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const current = groups[groups.length - 1];
    const startMs = current?.[0]!.at.getTime();
    const sinceStart = startMs === undefined ? Infinity : event.at.getTime() - startMs;
    const window = event.kind === 'airbag_deployment' ? airbagIncidentMs : impactWindowMs;
    if (current && sinceStart < window) current.push(event);
    else groups.push([event]);
  }
  return groups.map((group) => {
    const airbag = group.some((e) => e.kind === 'airbag_deployment');
    const peakG = Math.max(0, ...group.map((e) => Math.abs(e.g ?? 0)));
    const collision = airbag || group.some((e) => e.kind === 'impact') || peakG >= impactG;
    const located = group.find(
      (e): e is IncidentEventRow & { lat: number; lon: number } => e.lat !== null && e.lon !== null,
    );
    return {
      date: isoDay(group[0]!.at),
      type: collision ? 'collision' : 'hard_deceleration',
      severity: airbag || peakG >= majorImpactG ? 'critical' : collision ? 'high' : 'medium',
      location: located ? cityLevel(located.lat, located.lon) : null,
      coordinates: located ? { lat: round1(located.lat), lon: round1(located.lon) } : null,
      airbag_deployment: airbag,
    };
  });
}

/**
 * Ownership spans in the order companies got the vehicle, labelled "Owner N" by the order each
 * company first held it (a company that holds it again keeps its label), never named. Spans that
 * end before `from` are left out. Of several open spans (two companies' rows for one VIN) only the
 * latest is "present"; an earlier one ends when the next begins.
 */
export function ownership(
  spans: readonly OwnershipSpan[],
  series: readonly OdometerPoint[],
  driving: readonly DrivingDay[],
  from: Date | null,
  now: Date,
): Ownership[] {
  const sorted = [...spans].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  const labels = new Map<string, string>();
  for (const span of sorted) if (!labels.has(span.companyId)) labels.set(span.companyId, `Owner ${labels.size + 1}`);
  const anyTrips = driving.some((d) => d.trips > 0);
  const result: Ownership[] = [];
  sorted.forEach((span, i) => {
    const next = sorted.slice(i + 1).find((s) => s.startedAt.getTime() > span.startedAt.getTime());
    const end = span.endedAt ?? (next ? next.startedAt : null);
    if (from && end && end.getTime() < from.getTime()) return;
    const start = from && span.startedAt.getTime() < from.getTime() ? from : span.startedAt;
    const stop = end ?? now;
    const startKm = odometerKmAt(series, start);
    const stopKm = odometerKmAt(series, stop);
    const startDay = isoDay(start);
    const stopDay = isoDay(stop);
    const trips = driving
      .filter((d) => d.vehicleId === span.vehicleId && d.day >= startDay && (end ? d.day < stopDay : true))
      .reduce((total, d) => total + d.trips, 0);
    const days = Math.max(1, (stop.getTime() - start.getTime()) / msPerDay);
    result.push({
      owner: labels.get(span.companyId)!,
      start_date: isoDay(span.startedAt),
      end_date: end ? isoDay(end) : 'present',
      miles_driven: startKm !== null && stopKm !== null ? roundMiles(Math.max(0, kmToMiles(stopKm - startKm))) : null,
      avg_trips_per_day: anyTrips ? round1(trips / days) : null,
    });
  });
  return result;
}

export interface LatestSignals {
  batteryVoltage: { volts: number; at: string | null } | null;
  oilLifePercent: { percent: number; at: string | null } | null;
  brakeLiningPercent: { percent: number; at: string | null } | null;
}

/** Brake pads last 30,000–70,000 miles (docs/history-report.md); the midpoint, scaled below. */
export const brakePadMiles = { typical: 50_000, min: 30_000, max: 70_000 } as const;

function addMonths(at: Date, months: number): Date {
  const d = new Date(at);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d;
}

const fmtMiles = (value: number) => Math.round(value).toLocaleString('en-US');

/**
 * One forecast: its text, and whether it rests on the vehicle's own records (a reading or a
 * service on record) rather than on typical figures alone ("No battery voltage reported.").
 */
export interface Prediction {
  text: string;
  known: boolean;
}

/** What the forecasts read of the odometer: the distance series' first and last readings. */
export interface OdometerEnds {
  first: { at: Date; km: number } | null;
  last: { at: Date; km: number } | null;
}

/**
 * The harsh braking rate's terms, over one span: the report's data range (every owner), or for
 * premium monitoring events the current owner's days (assemble.ts `vehiclePredictions`).
 */
export interface BrakingSpan {
  hardBrakes: number;
  /** Miles driven over the same span (the distance series' odometer). */
  miles: number;
}

/**
 * The lifetime tier's forecasts: the oil change from the maintenance interval (src/domain/health-config.ts
 * defaults) and the last oil service, brakes from the lining sensor or the pad life scaled by the
 * harsh braking rate, the battery from its latest voltage against the battery rule's thresholds.
 * Premium monitoring events carry the known ones (src/monitoring/event-body.ts).
 */
export function predictionsOf(
  service: readonly ServiceItem[],
  odometer: OdometerEnds,
  braking: BrakingSpan,
  latest: LatestSignals,
  now: Date,
): Record<keyof Predictions, Prediction> {
  const { first, last } = odometer;
  const currentMiles = last ? kmToMiles(last.km) : null;
  const spanDays = first && last ? (last.at.getTime() - first.at.getTime()) / msPerDay : 0;
  const milesPerDay = first && last && spanDays >= 7 ? kmToMiles(last.km - first.km) / spanDays : null;
  const lastOf = (pattern: RegExp) => [...service].reverse().find((s) => pattern.test(s.type)) ?? null;

  const oil = defaultHealthConfig.maintenance.oil_change!;
  const interval = `every ${fmtMiles(oil.intervalMiles!)} miles or ${oil.intervalMonths} months`;
  const lastOil = lastOf(/oil/i);
  const oilLife = latest.oilLifePercent ? `Oil life ${Math.round(latest.oilLifePercent.percent)} %. ` : '';
  let nextOil: Prediction;
  if (!lastOil) {
    nextOil = {
      text: `${oilLife}No oil change on record; the interval is ${interval}.`,
      known: latest.oilLifePercent !== null,
    };
  } else {
    const dueDate = addMonths(new Date(`${lastOil.date}T00:00:00Z`), oil.intervalMonths!);
    const leftMiles =
      lastOil.mileage !== null && currentMiles !== null ? lastOil.mileage + oil.intervalMiles! - currentMiles : null;
    const byMiles =
      leftMiles !== null && milesPerDay && milesPerDay > 0
        ? new Date(now.getTime() + (Math.max(0, leftMiles) / milesPerDay) * msPerDay)
        : null;
    const due = byMiles && byMiles < dueDate ? byMiles : dueDate;
    const overdue = due.getTime() <= now.getTime() || (leftMiles !== null && leftMiles <= 0);
    nextOil = {
      text:
        `${oilLife}${overdue ? 'Overdue' : `Due around ${isoDay(due)}`}` +
        (leftMiles !== null
          ? ` (${leftMiles > 0 ? `${fmtMiles(leftMiles)} miles left` : `${fmtMiles(-leftMiles)} miles over`})`
          : '') +
        `; last oil change ${lastOil.date}, ${interval}.`,
      known: true,
    };
  }

  let brakes: Prediction;
  if (latest.brakeLiningPercent) {
    const { percent, at } = latest.brakeLiningPercent;
    const low = defaultHealthConfig.brakes.lowPercent;
    brakes = {
      text:
        `Brake lining at ${Math.round(percent)} %${at ? ` on ${at.slice(0, 10)}` : ''}; ` +
        (percent <= low ? 'replace now.' : `replace at ${low} % or below.`),
      known: true,
    };
  } else {
    const lastBrake = lastOf(/brake/i);
    const harshPer100 = braking.miles >= minScoreMiles ? (braking.hardBrakes / braking.miles) * 100 : 0;
    const life = Math.min(brakePadMiles.max, Math.max(brakePadMiles.min, brakePadMiles.typical / (1 + harshPer100)));
    if (!lastBrake || lastBrake.mileage === null || currentMiles === null) {
      brakes = {
        text: `No brake service with a mileage on record; pads typically last ${fmtMiles(brakePadMiles.min)}–${fmtMiles(brakePadMiles.max)} miles, about ${fmtMiles(life)} at this vehicle's braking.`,
        known: false,
      };
    } else {
      const left = lastBrake.mileage + life - currentMiles;
      brakes = {
        text:
          left > 0
            ? `About ${fmtMiles(left)} miles left (estimate: pads last about ${fmtMiles(life)} miles at this vehicle's braking; last brake service ${lastBrake.date}).`
            : `Due now (estimate: pads last about ${fmtMiles(life)} miles at this vehicle's braking; last brake service ${lastBrake.date}).`,
        known: true,
      };
    }
  }

  let battery: Prediction;
  if (!latest.batteryVoltage) {
    battery = { text: 'No battery voltage reported.', known: false };
  } else {
    const { volts, at } = latest.batteryVoltage;
    const { restingLowVolts, restingCriticalVolts, chargingLowVolts } = defaultHealthConfig.battery;
    const verdict =
      volts >= chargingLowVolts
        ? 'Charging normally'
        : volts >= restingLowVolts + 0.2
          ? 'Good'
          : volts >= restingLowVolts
            ? 'Fair'
            : volts >= restingCriticalVolts
              ? 'Weak'
              : 'Failing';
    const lastBattery = lastOf(/battery/i);
    battery = {
      text:
        `${verdict}: ${volts.toFixed(1)} V${at ? ` on ${at.slice(0, 10)}` : ''}` +
        (lastBattery ? `; replaced ${lastBattery.date}, 12 V batteries last 3–5 years.` : '.'),
      known: true,
    };
  }
  return { next_oil_change: nextOil, brake_replacement: brakes, battery_health: battery };
}

/** The report's `predictive_insights`: every forecast's text, known or not. */
export function predictiveInsights(
  service: readonly ServiceItem[],
  series: readonly OdometerPoint[],
  metrics: Metrics,
  latest: LatestSignals,
  now: Date,
): Predictions {
  const first = series[0] ?? null;
  const last = series[series.length - 1] ?? null;
  const braking = {
    hardBrakes: metrics.harsh_braking_events,
    miles: first && last ? kmToMiles(last.km - first.km) : 0,
  };
  const forecasts = predictionsOf(service, { first, last }, braking, latest, now);
  return {
    next_oil_change: forecasts.next_oil_change.text,
    brake_replacement: forecasts.brake_replacement.text,
    battery_health: forecasts.battery_health.text,
  };
}
