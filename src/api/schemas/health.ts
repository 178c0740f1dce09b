/** Schemas of the health configuration overrides (src/domain/health-config.ts), all fields optional. */
import Type from 'typebox';
import { StringEnum, maxItems, maxLength } from '../../web/schemas.js';

const number = (minimum: number, maximum: number) => Type.Optional(Type.Number({ minimum, maximum }));
const section = (fields: Record<string, ReturnType<typeof number>>) =>
  Type.Optional(Type.Object(fields, { additionalProperties: false }));
const severity = Type.Optional(StringEnum(['info', 'low', 'medium', 'high', 'critical']));

/** A maintenance type: oil_change, tire_rotation, brake_inspection, … */
export const MaintenanceType = Type.String({ pattern: '^[a-z][a-z0-9_]{1,49}$', maxLength: maxLength.code });

const MaintenanceIntervalOverride = Type.Object(
  {
    intervalMiles: Type.Optional(Type.Union([Type.Number({ minimum: 1, maximum: 1_000_000 }), Type.Null()])),
    intervalMonths: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 240 }), Type.Null()])),
    soonMiles: number(0, 100_000),
    soonDays: number(0, 3650),
    soonSeverity: severity,
    overdueSeverity: severity,
    escalateAfterMiles: number(0, 1_000_000),
    escalateAfterDays: number(0, 3650),
    escalatedSeverity: severity,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const HealthConfigOverrides = Type.Object(
  {
    battery: section({
      nominalVolts: number(6, 48),
      restingLowVolts: number(0, 60),
      restingCriticalVolts: number(0, 60),
      restingConfirmSeconds: number(0, 86_400),
      chargingLowVolts: number(0, 60),
      chargingConfirmSeconds: number(0, 86_400),
      crankingIgnoreSeconds: number(0, 3600),
      rearmMarginVolts: number(0, 10),
      rearmSeconds: number(0, 86_400),
    }),
    coolant: section({
      highC: number(0, 200),
      criticalC: number(0, 200),
      confirmSeconds: number(0, 3600),
      rearmMarginC: number(0, 50),
      rearmSeconds: number(0, 3600),
    }),
    tires: section({
      placardKpa: number(50, 1500),
      warnRatio: number(0, 1),
      criticalRatio: number(0, 1),
      clearRatio: number(0, 1.5),
    }),
    fuel: section({
      lowPercent: number(0, 100),
      criticalPercent: number(0, 100),
      confirmSeconds: number(0, 86_400),
      rearmPercent: number(0, 100),
    }),
    dtc: section({ clearAfterReports: number(1, 100) }),
    brakes: section({ lowPercent: number(0, 100), criticalPercent: number(0, 100), rearmPercent: number(0, 100) }),
    link: section({
      staleDays: number(1, 365),
      backwardsToleranceKm: number(0, 1000),
      immediateConflictKm: number(0, 100_000),
      maxDailyKm: number(1, 100_000),
      confirmReadings: number(1, 100),
    }),
    maintenance: Type.Optional(
      Type.Record(Type.String(), MaintenanceIntervalOverride, {
        maxProperties: maxItems,
        propertyNames: MaintenanceType,
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Partial overrides of the health defaults (docs/health.md); omitted fields keep the default.',
  },
);

export const HealthConfigView = Type.Object({
  overrides: Type.Object({}, { additionalProperties: true }),
  effective: Type.Object({}, { additionalProperties: true }),
});
