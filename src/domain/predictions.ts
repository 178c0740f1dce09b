/**
 * The `predictions` of premium monitoring events (docs/monitoring.md "Predictions (premium)"): the texts of the history report's
 * `predictive_insights` (src/history/sections.ts `predictionsOf`), each null where the vehicle's
 * records say nothing of it.
 */
export interface VehiclePredictions {
  next_oil_change: string | null;
  brake_replacement: string | null;
  battery_health: string | null;
}
