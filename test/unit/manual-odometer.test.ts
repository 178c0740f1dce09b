import { describe, expect, it } from 'vitest';
import { decideManualOdometer, type ManualOdometerContext } from '../../src/vehicles/manual-odometer.js';

const now = new Date('2026-11-22T12:00:00Z');
const day = 24 * 3600 * 1000;

function ctx(overrides: Partial<ManualOdometerContext> = {}): ManualOdometerContext {
  return { telematicsProvider: null, odometer: null, ecuOdometerAt: null, linkBroken: null, ...overrides };
}

describe('manual odometer rule', () => {
  it('accepts the first reading of a manually tracked vehicle and converts miles to km', () => {
    const decision = decideManualOdometer(ctx(), 10_000, now);
    expect(decision).toEqual({ ok: true, km: 16_093.44 });
  });

  it('refuses a value below the latest odometer, accepts equal or higher', () => {
    const odometer = { km: 16_093.44, as_of: '2026-11-20T00:00:00Z', source: 'manual' };
    expect(decideManualOdometer(ctx({ odometer }), 9_999, now)).toMatchObject({ ok: false, reason: 'backwards' });
    expect(decideManualOdometer(ctx({ odometer }), 10_000, now).ok).toBe(true);
    expect(decideManualOdometer(ctx({ odometer }), 10_001, now).ok).toBe(true);
  });

  it('refuses while the provider supplies a current ECU odometer', () => {
    const decision = decideManualOdometer(
      ctx({ telematicsProvider: 'samsara', ecuOdometerAt: new Date(now.getTime() - day) }),
      50_000,
      now,
    );
    expect(decision).toMatchObject({ ok: false, reason: 'provider_ecu_current' });
  });

  it('accepts when the ECU odometer is older than the 7-day stale window', () => {
    const ecuOdometerAt = new Date(now.getTime() - 7 * day - 1000);
    expect(decideManualOdometer(ctx({ telematicsProvider: 'samsara', ecuOdometerAt }), 50_000, now).ok).toBe(true);
  });

  it('accepts when the provider link is broken, even with a recent ECU reading', () => {
    const decision = decideManualOdometer(
      ctx({
        telematicsProvider: 'geotab',
        ecuOdometerAt: new Date(now.getTime() - day),
        linkBroken: { reason: 'conflict', since: '2026-11-21T00:00:00Z', tracker_km: 1 },
      }),
      50_000,
      now,
    );
    expect(decision.ok).toBe(true);
  });

  it('accepts for a provider vehicle whose odometer is GPS-derived (no ECU reading)', () => {
    expect(decideManualOdometer(ctx({ telematicsProvider: 'traccar' }), 1234, now).ok).toBe(true);
  });
});
