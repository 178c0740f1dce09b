/** Reading adapter results in provider tests. */
import type { NormalizeResult } from '../../providers/types.js';

/** The successful result, or the test fails with the adapter's reason. */
export function ok(result: NormalizeResult) {
  if (!result.ok) throw new Error(result.reason);
  return result;
}

/** Samples as plain rows so whole payloads can be compared exactly. */
export function rows(result: NormalizeResult) {
  return ok(result).samples.map((s) => ({
    vehicle: s.providerVehicleId,
    signal: s.signal,
    at: s.recordedAt.toISOString(),
    value: s.value,
  }));
}
