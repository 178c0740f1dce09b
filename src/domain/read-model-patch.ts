/**
 * How newly written latest samples change a vehicle's `signals` read model, as a pure function:
 * scalars by value, objects with their own `as_of`, every signal's time under `observed_at`.
 * `odometer` ({km, as_of, source}) is set here only by a manual reading; a provider's odometer
 * becomes the vehicle's odometer through the health stage's link rule, so a reading that
 * contradicts the trusted odometer never does (src/health/rules/link-broken.ts). No sample is
 * named like those two fields of the read model (`readModelFields`, enforced by sanitize.ts), so a
 * provider's key never overwrites them.
 */
import { isOdometerSignal, type LatestSample } from './sample.js';

export interface ReadModelPatch {
  vehicleId: string;
  /** Top-level keys to set (odometer excluded: it is set only when newer than the stored one). */
  signals: Record<string, unknown>;
  observedAt: Record<string, string>;
  odometer: { km: number; as_of: string; source: string } | null;
}

export function readModelPatches(written: readonly LatestSample[]): ReadModelPatch[] {
  const patches = new Map<string, ReadModelPatch>();
  for (const sample of written) {
    const patch = patches.get(sample.vehicleId) ?? {
      vehicleId: sample.vehicleId,
      signals: {},
      observedAt: {},
      odometer: null,
    };
    const asOf = sample.recordedAt.toISOString();
    patch.observedAt[sample.signal] = asOf;
    if (isOdometerSignal(sample.signal)) {
      if (sample.source === 'manual' && (!patch.odometer || asOf > patch.odometer.as_of)) {
        patch.odometer = { km: sample.value as number, as_of: asOf, source: sample.source };
      }
    } else if (typeof sample.value === 'object' && sample.value !== null && !Array.isArray(sample.value)) {
      patch.signals[sample.signal] = { ...(sample.value as Record<string, unknown>), as_of: asOf };
    } else {
      patch.signals[sample.signal] = sample.value;
    }
    patches.set(sample.vehicleId, patch);
  }
  return [...patches.values()];
}
