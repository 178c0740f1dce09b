/**
 * Schemas of the monitoring API under /v1 (docs/monitoring.md): subscriptions, geofences,
 * deliveries with their attempts, endpoint health and dry runs.
 */
import Type from 'typebox';
import { attemptsListed, endpointHealthWindow, monitoringDeliveryStatuses } from '../../db/monitoring-deliveries.js';
import { maxCircleRadiusM, maxGeofenceVertices } from '../../monitoring/geofences.js';
import { kindAliases, monitoringKinds, monitoringTiers } from '../../domain/monitoring-kinds.js';
import {
  Nullable,
  NullableString,
  NullableTimestamp,
  PageQuery,
  StringEnum,
  Text,
  Timestamp,
  Uuid,
  maxItems,
} from '../../web/schemas.js';

const severities = ['info', 'low', 'medium', 'high', 'critical'] as const;

/** The canonical kinds and the two aliases of the spec's examples. */
export const requestableKinds = [...monitoringKinds, ...Object.keys(kindAliases)];

const kindList = `Kinds: ${monitoringKinds.join(', ')}; aliases maintenance_needed (maintenance_due) and low_battery (battery_voltage_low).`;

export const MonitoringOptionsRequest = Type.Object(
  {
    speed_limit_kph: Type.Optional(
      Type.Number({ minimum: 1, maximum: 300, description: 'speed_limit_exceeded above this, km/h. Default 120.' }),
    ),
    idle_minutes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1440,
        description: 'excessive_idling after this long, minutes. Default 10.',
      }),
    ),
    mileage_threshold_miles: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: 2_000_000,
          description: 'mileage_threshold fires once when the odometer crosses this, miles. Default null (never).',
        }),
      ),
    ),
    fuel_level_percent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 99, description: 'fuel_level_low at or below this, percent. Default 15.' }),
    ),
    geofence_ids: Type.Optional(
      Nullable(
        Type.Array(Uuid, {
          maxItems,
          uniqueItems: true,
          description: "Geofences watched for entry and exit, the company's own. Default null: all of them.",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

export const MonitoringOptions = Type.Object({
  speed_limit_kph: Type.Number(),
  idle_minutes: Type.Integer(),
  mileage_threshold_miles: Nullable(Type.Integer()),
  fuel_level_percent: Type.Integer(),
  geofence_ids: Nullable(Type.Array(Type.String())),
});

export const SubscribeBody = Type.Object(
  {
    vehicle_id: Uuid,
    webhook_url: Text('url', { minLength: 1, description: 'HTTPS URL (http only to WEBHOOK_ALLOW_NETS).' }),
    events: Type.Array(StringEnum(requestableKinds), { minItems: 1, maxItems, description: kindList }),
    tier: Type.Optional(
      StringEnum(monitoringTiers, {
        description:
          'Default standard. basic: maintenance alerts and maintenance_due; standard adds system warnings; premium: all kinds.',
      }),
    ),
    options: Type.Optional(MonitoringOptionsRequest),
  },
  { additionalProperties: false },
);

const healthWindow = `started in the last ${endpointHealthWindow.hours} hours (the newest ${endpointHealthWindow.attempts} at most)`;

export const EndpointHealth = Type.Object({
  success_rate: Nullable(
    Type.Number({ description: 'Share of the `attempts` attempts answered 2xx, 0 to 1; null when there are none.' }),
  ),
  attempts: Type.Integer({ description: `Attempts success_rate covers: those ${healthWindow}.` }),
  last_success_at: Nullable(
    Type.String({ ...Timestamp, description: `The newest success among the attempts ${healthWindow}.` }),
  ),
  last_failure_at: Nullable(
    Type.String({ ...Timestamp, description: `The newest failure among the attempts ${healthWindow}.` }),
  ),
  last_failure: Nullable(
    Type.Object({
      status_code: Nullable(Type.Integer({ description: "The receiver's status; null when none came back." })),
      error: NullableString,
    }),
  ),
});

export const MonitoringSubscription = Type.Object({
  id: Type.String(),
  vehicle_id: Type.String(),
  webhook_url: Type.String(),
  events: Type.Array(Type.String(), { description: 'Canonical kinds (aliases resolved).' }),
  tier: Type.String(),
  options: MonitoringOptions,
  status: StringEnum(['active', 'deleted']),
  created_at: Timestamp,
});

export const CreatedMonitoringSubscription = Type.Object({
  ...MonitoringSubscription.properties,
  signing_secret: Type.String({ description: 'Signs X-Service-Signature. Shown once: store it now.' }),
});

export const MonitoringSubscriptionWithHealth = Type.Object({
  ...MonitoringSubscription.properties,
  endpoint_health: EndpointHealth,
});

export const SubscriptionListQuery = Type.Object(
  {
    vehicle_id: Type.Optional(Uuid),
    status: Type.Optional(
      StringEnum(['active', 'deleted'], {
        description: 'Default active: live subscriptions; deleted lists the others.',
      }),
    ),
    limit: PageQuery.limit,
    offset: PageQuery.offset,
  },
  { additionalProperties: false },
);

export const MonitoringAttempt = Type.Object({
  at: Timestamp,
  status_code: Nullable(Type.Integer()),
  error: NullableString,
  duration_ms: Type.Integer(),
  trigger: Type.String({ description: 'scheduled, manual, recover or worker_lost.' }),
});

export const MonitoringDelivery = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  event: Type.String(),
  status: StringEnum(monitoringDeliveryStatuses),
  attempts: Type.Array(MonitoringAttempt, { description: `The newest ${attemptsListed} attempts, oldest first.` }),
  attempt_count: Type.Integer({ description: 'Every attempt made, those not listed included.' }),
  next_attempt_at: NullableTimestamp,
  created_at: Timestamp,
});

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(monitoringDeliveryStatuses)),
    event: Type.Optional(StringEnum(requestableKinds)),
    since: Type.Optional(
      Type.String({ ...PageQuery.updated_since, description: 'Inclusive: deliveries created at or after this time.' }),
    ),
    limit: PageQuery.limit,
    offset: PageQuery.offset,
  },
  { additionalProperties: false },
);

/**
 * The area as one flat object, every input bounded: `type` decides which fields it needs (Polygon:
 * `coordinates`; Circle: `center` and `radius_m`), which `parseGeofenceArea` checks with the
 * geometry (closed rings, latitude ranges, the vertex total).
 */
export const GeofenceArea = Type.Object(
  {
    type: StringEnum(['Polygon', 'Circle']),
    coordinates: Type.Optional(
      Type.Array(
        Type.Array(
          Type.Array(Type.Number({ minimum: -180, maximum: 180 }), {
            minItems: 2,
            maxItems: 3,
            description: '[lon, lat], an altitude ignored',
          }),
          { maxItems: maxGeofenceVertices },
        ),
        {
          minItems: 1,
          maxItems,
          description: `Polygon: the outer ring, then holes; each closed, at least 4 positions, at most ${maxGeofenceVertices} in all.`,
        },
      ),
    ),
    center: Type.Optional(
      Type.Object(
        { lat: Type.Number({ minimum: -90, maximum: 90 }), lon: Type.Number({ minimum: -180, maximum: 180 }) },
        { additionalProperties: false, description: 'Circle: the centre.' },
      ),
    ),
    radius_m: Type.Optional(
      Type.Number({ minimum: 1, maximum: maxCircleRadiusM, description: 'Circle: the radius, metres.' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A GeoJSON Polygon {"type": "Polygon", "coordinates": [[[lon, lat], …]]} or a circle ' +
      '{"type": "Circle", "center": {"lat", "lon"}, "radius_m"}.',
  },
);

export const Geofence = Type.Object({
  id: Type.String(),
  name: Type.String(),
  area: GeofenceArea,
  created_at: Timestamp,
});

export const GeofenceBody = Type.Object(
  {
    name: Text('name', { minLength: 1 }),
    area: GeofenceArea,
  },
  { additionalProperties: false },
);

export const DryRunBody = Type.Object(
  {
    since: Type.String({
      ...Timestamp,
      description: 'Replay the readings recorded from this time until now; at most 90 days back.',
    }),
  },
  { additionalProperties: false },
);

export const DryRunEvent = Type.Object({
  event: Type.String(),
  severity: StringEnum(severities),
  occurred_at: Timestamp,
  details: Type.Object({
    type: Type.String(),
    description: Type.String(),
    current_mileage: Nullable(Type.Number()),
    last_service: NullableString,
    estimated_cost: NullableString,
  }),
  actions: Type.Object({ recommended: Type.String(), urgent: Type.Boolean(), can_drive: Type.Boolean() }),
});

export const DryRunResult = Type.Object({
  subscription_id: Type.String(),
  since: Timestamp,
  until: Timestamp,
  events: Type.Array(DryRunEvent),
});

export const RecoverBody = Type.Object(
  {
    since: Type.String({
      ...Timestamp,
      description:
        "Resend the failed deliveries created from this time on; the tier's retention window bounds it (older ones are gone).",
    }),
  },
  { additionalProperties: false },
);

export const RetryAccepted = Type.Object(
  {
    delivery_id: Uuid,
    queued: Type.Boolean({
      description: 'false when an attempt of this delivery was already being sent: that attempt is the one more.',
    }),
  },
  { additionalProperties: false },
);

export const RecoverAccepted = Type.Object(
  {
    subscription_id: Uuid,
    since: Type.String({
      ...Timestamp,
      description: "The effective start: since, or the retention window's start if later.",
    }),
    queued: Type.Integer({ minimum: 0, description: 'Failed deliveries queued for one more attempt each.' }),
  },
  { additionalProperties: false },
);
