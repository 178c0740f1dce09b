/**
 * Whether an integrator may record an odometer value by hand (PUT /vehicles/{id}). Refused when
 * the value would run the odometer backwards, or when the vehicle's provider supplies a current
 * ECU odometer (a healthy link whose latest ECU reading is within the stale window): the
 * provider is then the authority. Rule and rationale: docs/odometer.md.
 */
import { staleOdometerAfterMs, type LinkBroken, type OdometerSignal } from '../domain/vehicle.js';
import { milesToKm } from '../domain/units.js';

export interface ManualOdometerContext {
  telematicsProvider: string | null;
  odometer: OdometerSignal | null;
  ecuOdometerAt: Date | null;
  linkBroken: LinkBroken | null;
}

export type ManualOdometerDecision =
  { ok: true; km: number } | { ok: false; reason: 'backwards' | 'provider_ecu_current'; message: string };

// Below this, a difference is float noise from the mile/km round trip, not a real step back.
const toleranceKm = 0.001;

export function decideManualOdometer(ctx: ManualOdometerContext, miles: number, now: Date): ManualOdometerDecision {
  const km = milesToKm(miles);
  if (
    ctx.telematicsProvider !== null &&
    ctx.linkBroken === null &&
    ctx.ecuOdometerAt !== null &&
    now.getTime() - ctx.ecuOdometerAt.getTime() <= staleOdometerAfterMs
  ) {
    return {
      ok: false,
      reason: 'provider_ecu_current',
      message: `the odometer of this vehicle comes from ${ctx.telematicsProvider}, which reports a current ECU odometer`,
    };
  }
  if (ctx.odometer && km < ctx.odometer.km - toleranceKm) {
    return {
      ok: false,
      reason: 'backwards',
      message: `odometer cannot go backwards: the latest reading is ${ctx.odometer.km.toFixed(1)} km (${ctx.odometer.as_of})`,
    };
  }
  return { ok: true, km };
}
