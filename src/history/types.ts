/**
 * The vehicle history report (docs/history-report.md): the JSON answer of
 * `POST /v1/history/report` and the one input of the PDF renderer. Built by a pure assembler from
 * the VIN's rollups and records (src/history/assemble.ts); every figure is in miles.
 *
 * Terminology:
 * - data range: the tier's window back from `generated_at` (6 months, 1 year, 3 years, all).
 * - owner: a company that held the vehicle for a span of time, labelled "Owner 1", "Owner 2", … in
 *   the order they held it; never named or identified in the report.
 * - odometer reading: a trusted odometer value at a time, from a source (a provider, `manual`,
 *   `service`); the integrity rules compare consecutive readings.
 */
import type { VehiclePredictions } from '../domain/predictions.js';

export const reportTiers = ['basic', 'standard', 'comprehensive', 'lifetime'] as const;
export type ReportTier = (typeof reportTiers)[number];

export interface OdometerReading {
  /** ISO 8601 time of the reading. */
  at: string;
  miles: number;
  source: string;
}

export interface IntegrityFlag {
  /** backwards | impossible_rate | source_conflict */
  rule: 'backwards' | 'impossible_rate' | 'source_conflict';
  /** One or two sentences a buyer understands, with the numbers. */
  explanation: string;
  readings: OdometerReading[];
}

export interface OdometerIntegrity {
  status: 'consistent' | 'flagged' | 'insufficient_data';
  flags: IntegrityFlag[];
}

export interface HistoryReport {
  report_id: string;
  vin: string;
  tier: ReportTier;
  generated_at: string;
  /** The tier's window: `from` null for lifetime (all available). Additive to the spec. */
  data_range: { from: string | null; to: string };
  vehicle: { make: string | null; model: string | null; year: number | null; trim: string | null };
  lifetime_metrics: {
    total_miles: number | null;
    /** Date (YYYY-MM-DD) of the first record held. */
    first_recorded: string | null;
    avg_miles_per_year: number | null;
    /** 0–100, null below the minimum distance (docs/history-report.md). */
    driving_score: number | null;
    harsh_braking_events: number;
    rapid_acceleration_events: number;
    /** mph while moving. */
    avg_speed: number | null;
    /** Share of moving time at highway speed, 0–100. */
    highway_percentage: number | null;
  };
  service_history: Array<{
    date: string;
    type: string;
    mileage: number | null;
    shop: string | null;
    verified: boolean;
  }>;
  incidents: Array<{
    date: string;
    type: string;
    severity: string;
    /**
     * City level: the nearest place ("Austin, Texas, US", or "City, CC" where GeoNames names no
     * region), "near 30.3° N, 97.7° W" where no place is within 50 km, or null when the incident
     * has no position; never a street address (docs/places.md).
     */
    location: string | null;
    /** The incident's position rounded to 0.1° (about 11 km), or null. Additive to the spec. */
    coordinates: { lat: number; lon: number } | null;
    airbag_deployment: boolean;
  }> | null;
  ownership: Array<{
    owner: string;
    start_date: string;
    end_date: string | 'present';
    miles_driven: number | null;
    avg_trips_per_day: number | null;
  }> | null;
  telematics: {
    monthly_mileage: Array<{ month: string; miles: number }>;
    odometer_timeline: Array<OdometerReading & { flagged: boolean }>;
  } | null;
  /** Every forecast's text, known or not; premium monitoring events carry the known ones (VehiclePredictions). */
  predictive_insights: { [K in keyof VehiclePredictions]: string } | null;
  odometer_integrity: OdometerIntegrity;
}
