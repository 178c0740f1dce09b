/**
 * Monitoring subscriptions of the caller's company (docs/monitoring.md), under /v1: subscribe
 * (the signing secret is returned once), list, get with endpoint health, delete, the deliveries
 * with their attempts, and the dry run over stored history. Manual retry and recover are the
 * delivery pipeline's routes (docs/monitoring.md).
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import type { CpuPool } from '../../cpu-pool/pool.js';
import { loadGeofenceIds, loadGeofenceTexts } from '../../db/geofences.js';
import { loadLastServices, ruleSignals } from '../../db/health.js';
import {
  countMonitoringDeliveries,
  listMonitoringDeliveries,
  loadEndpointHealth,
  type MonitoringDeliveryRecord,
} from '../../db/monitoring-deliveries.js';
import {
  loadDryRunVehicle,
  readingPagesBetween,
  vehicleEventPagesBetween,
  type JsonPage,
} from '../../db/monitoring-history.js';
import {
  countMonitoringSubscriptions,
  deleteMonitoringSubscription,
  findMonitoringSubscription,
  insertMonitoringSubscription,
  listMonitoringSubscriptions,
  type MonitoringSubscriptionRecord,
} from '../../db/monitoring-subscriptions.js';
import type { Pool } from '../../db/pool.js';
import { findActiveVehicle } from '../../db/vehicles.js';
import { msPerDay } from '../../domain/units.js';
import { invalidRequest, notFound, type FieldError } from '../../errors.js';
import { effectiveHealthConfig } from '../../health/config.js';
import { monitoringSignals } from '../../monitoring/engine.js';
import {
  canonicalKind,
  monitoringOptions,
  monitoringTiers,
  tierKinds,
  type MonitoringKind,
  type MonitoringTier,
  type StoredMonitoringOptions,
} from '../../monitoring/kinds.js';
import { encryptSecret, newSecret } from '../../security/secrets.js';
import { targetUrlProblem } from '../../http/ssrf.js';
import { createWithinCap, type CompanyCap } from '../../db/company-caps.js';
import { Envelope, ErrorEnvelope, PathId, authErrorResponses, ok } from '../../web/schemas.js';
import { isRecordId } from '../../domain/ids.js';
import {
  CreatedMonitoringSubscription,
  DeliveryListQuery,
  DryRunBody,
  DryRunResult,
  MonitoringDelivery,
  MonitoringSubscription,
  MonitoringSubscriptionWithHealth,
  SubscribeBody,
  SubscriptionListQuery,
} from '../schemas/monitoring.js';

const security = [{ bearerAuth: [] }];
const tags = ['Monitoring'];

/** How far back a dry run may replay: the longest retention but premium's, and a bounded replay. */
const dryRunMaxDays = 90;
/**
 * Rows per statement when a dry run reads its window: a page of 5,000 location fixes is one JSON
 * text of about 0.8 MB, received in a few ms; the window's 100,000 fixes are 20 such statements.
 */
const dryRunPageRows = 5000;

const SubscriptionParams = Type.Object({ subscription_id: PathId });

/** The options as stored and answered: snake_case, every default filled in. */
function answeredOptions(stored: StoredMonitoringOptions): Required<StoredMonitoringOptions> {
  const options = monitoringOptions(stored);
  return {
    speed_limit_kph: options.speedLimitKph,
    idle_minutes: options.idleMinutes,
    mileage_threshold_miles: options.mileageThresholdMiles,
    fuel_level_percent: options.fuelLevelPercent,
    geofence_ids: options.geofenceIds,
  };
}

function present(s: MonitoringSubscriptionRecord) {
  return {
    id: s.id,
    vehicle_id: s.vehicleId,
    webhook_url: s.webhookUrl,
    events: s.events,
    tier: s.tier,
    options: answeredOptions(s.options),
    status: s.deletedAt ? ('deleted' as const) : ('active' as const),
    created_at: s.createdAt.toISOString(),
  };
}

function presentDelivery(d: MonitoringDeliveryRecord) {
  return {
    id: d.id,
    event_id: d.eventId,
    event: d.event,
    status: d.status,
    attempts: d.attempts.map((a) => ({
      at: a.at.toISOString(),
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      trigger: a.trigger,
    })),
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
  };
}

/**
 * The canonical kinds of a request (aliases resolved, duplicates dropped, request order kept),
 * and an error for each that the tier does not cover, naming the tier that does.
 */
function subscribedKinds(
  requested: readonly string[],
  tier: MonitoringTier,
): { kinds: MonitoringKind[]; errors: FieldError[] } {
  const kinds: MonitoringKind[] = [];
  const errors: FieldError[] = [];
  requested.forEach((name, index) => {
    const kind = canonicalKind(name);
    if (!kind) {
      errors.push({ field: `events.${index}`, message: `"${name}" is not a monitoring event kind` });
      return;
    }
    if (!tierKinds[tier].includes(kind)) {
      const covering = monitoringTiers.find((t) => tierKinds[t].includes(kind))!;
      const named = kind === name ? name : `${name} (${kind})`;
      errors.push({
        field: `events.${index}`,
        message: `${named} is not covered by the ${tier} tier; the ${covering} tier covers it`,
      });
      return;
    }
    if (!kinds.includes(kind)) kinds.push(kind);
  });
  return { kinds, errors };
}

/** Pages of a dry run's window as their JSON texts; past `max` rows in all, `refuse()` is thrown. */
async function* boundedPages<Key>(
  pages: AsyncIterable<JsonPage<Key>>,
  max: number,
  refuse: () => Error,
): AsyncGenerator<string> {
  let rows = 0;
  for await (const page of pages) {
    rows += page.rows;
    if (rows > max) throw refuse();
    yield page.json;
  }
}

/** The success envelope around `data` serialized elsewhere (a CPU-pool thread): what Fastify sends for `ok(data)`. */
function okJson(data: Buffer): Buffer {
  const [before, after] = JSON.stringify(ok(null)).split('"data":null');
  return Buffer.concat([Buffer.from(`${before}"data":`), data, Buffer.from(after!)]);
}

export const monitoringSubscriptionRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  config: Config;
  cpuPool: CpuPool;
  now: () => Date;
}> = async (app, deps) => {
  const cap: CompanyCap = {
    resource: 'monitoring subscriptions',
    limit: deps.config.monitoringSubscriptionsPerCompany,
    count: (q, companyId) => countMonitoringSubscriptions(q, companyId, { deleted: false, vehicleId: null }),
  };
  const historySignals = [...new Set([...ruleSignals, ...monitoringSignals])];

  async function requireSubscription(companyId: string, id: string): Promise<MonitoringSubscriptionRecord> {
    const subscription = isRecordId(id) ? await findMonitoringSubscription(deps.pool, companyId, id) : null;
    if (!subscription) throw notFound('monitoring subscription');
    return subscription;
  }

  app.post(
    '/runs/subscribe',
    {
      schema: {
        tags,
        summary: 'Subscribe a vehicle to monitoring events; the signing secret is returned once',
        description:
          'The tier (default standard) must cover every kind asked for. 404 for a vehicle that is not an active ' +
          'vehicle of the company; 409 LIMIT_REACHED past MONITORING_SUBSCRIPTIONS_PER_COMPANY.',
        security,
        body: SubscribeBody,
        response: {
          201: Envelope(CreatedMonitoringSubscription),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          409: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const { companyId } = request.principal;
      const tier = body.tier ?? 'standard';
      const { kinds, errors } = subscribedKinds(body.events, tier);
      const urlProblem = targetUrlProblem(body.webhook_url, deps.config.webhookAllowNets);
      if (urlProblem) errors.push({ field: 'webhook_url', message: urlProblem });
      const geofenceIds = body.options?.geofence_ids ?? null;
      if (geofenceIds && geofenceIds.length > 0) {
        // Another company's geofence is as unknown as a made-up id: a field error, revealing nothing.
        const own = new Set(await loadGeofenceIds(deps.pool, companyId, geofenceIds));
        geofenceIds.forEach((id, index) => {
          if (!own.has(id.toLowerCase())) {
            errors.push({ field: `options.geofence_ids.${index}`, message: 'is not one of your geofences' });
          }
        });
      }
      if (errors.length > 0) throw invalidRequest(errors);
      if (!(await findActiveVehicle(deps.pool, companyId, body.vehicle_id))) throw notFound('vehicle');

      const secret = newSecret('whsec_');
      const subscription = await createWithinCap(deps.pool, cap, companyId, (tx) =>
        insertMonitoringSubscription(tx, {
          companyId,
          vehicleId: body.vehicle_id,
          webhookUrl: body.webhook_url,
          events: kinds,
          tier,
          options: answeredOptions({
            ...body.options,
            ...(geofenceIds ? { geofence_ids: geofenceIds.map((id) => id.toLowerCase()) } : {}),
          }),
          secretCiphertext: encryptSecret(deps.config.secretsKey, secret),
        }),
      );
      return reply.code(201).send(ok({ ...present(subscription), signing_secret: secret }));
    },
  );

  app.get(
    '/subscriptions',
    {
      schema: {
        tags,
        summary: 'List monitoring subscriptions, newest first',
        security,
        querystring: SubscriptionListQuery,
        response: { 200: Envelope(Type.Array(MonitoringSubscription)), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { query } = request;
      const { companyId } = request.principal;
      const filter = { deleted: query.status === 'deleted', vehicleId: query.vehicle_id ?? null };
      const [subscriptions, total] = await Promise.all([
        listMonitoringSubscriptions(deps.pool, companyId, filter, query.limit, query.offset),
        countMonitoringSubscriptions(deps.pool, companyId, filter),
      ]);
      return ok(subscriptions.map(present), { limit: query.limit, offset: query.offset, total });
    },
  );

  app.get(
    '/subscriptions/:subscription_id',
    {
      schema: {
        tags,
        summary: 'Get a monitoring subscription with its endpoint health (never its secret)',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(MonitoringSubscriptionWithHealth), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const subscription = await requireSubscription(request.principal.companyId, request.params.subscription_id);
      const health = await loadEndpointHealth(deps.pool, subscription.id, deps.now());
      return ok({
        ...present(subscription),
        endpoint_health: {
          success_rate: health.attempts > 0 ? health.successes / health.attempts : null,
          attempts: health.attempts,
          last_success_at: health.lastSuccessAt?.toISOString() ?? null,
          last_failure_at: health.lastFailure?.at.toISOString() ?? null,
          last_failure: health.lastFailure
            ? { status_code: health.lastFailure.statusCode, error: health.lastFailure.error }
            : null,
        },
      });
    },
  );

  app.delete(
    '/subscriptions/:subscription_id',
    {
      schema: {
        tags,
        summary: 'Delete a monitoring subscription: detection stops; it stays readable with status deleted',
        description:
          'Deliveries still owed are not sent (the pipeline settles them as failed). 404 for one already deleted.',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(MonitoringSubscription), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const id = request.params.subscription_id;
      const deleted = isRecordId(id)
        ? await deleteMonitoringSubscription(deps.pool, request.principal.companyId, id)
        : null;
      if (!deleted) throw notFound('monitoring subscription');
      return ok(present(deleted));
    },
  );

  app.get(
    '/subscriptions/:subscription_id/deliveries',
    {
      schema: {
        tags,
        summary: 'Deliveries of this subscription, newest first, each with its attempt timeline',
        security,
        params: SubscriptionParams,
        querystring: DeliveryListQuery,
        response: {
          200: Envelope(Type.Array(MonitoringDelivery)),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { companyId } = request.principal;
      const subscription = await requireSubscription(companyId, request.params.subscription_id);
      const { query } = request;
      const filter = {
        status: query.status ?? null,
        event: query.event ? canonicalKind(query.event) : null,
        since: query.since ? new Date(query.since) : null,
      };
      const [deliveries, total] = await Promise.all([
        listMonitoringDeliveries(deps.pool, companyId, subscription.id, filter, query.limit, query.offset),
        countMonitoringDeliveries(deps.pool, companyId, subscription.id, filter),
      ]);
      return ok(deliveries.map(presentDelivery), { limit: query.limit, offset: query.offset, total });
    },
  );

  app.post(
    '/subscriptions/:subscription_id/dry-run',
    {
      schema: {
        tags,
        summary: 'The events this subscription would have sent from the stored readings since a time',
        description:
          `Replays the vehicle's readings and provider events from \`since\` (at most ${dryRunMaxDays} days back) until ` +
          'now through the same detectors, from a fresh state. Nothing is stored or delivered. 400 when the window ' +
          'holds more than MONITORING_DRY_RUN_MAX_READINGS readings; 422 WORK_BUDGET_EXCEEDED when the replay needs ' +
          'more than MONITORING_DRY_RUN_MAX_FENCE_TESTS geofence tests or CPU_TASK_BUDGET_MS of computation ' +
          '(details.limit names which); 503 when the CPU pool is full.',
        security,
        params: SubscriptionParams,
        body: DryRunBody,
        response: {
          200: Envelope(DryRunResult),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          422: ErrorEnvelope,
          503: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { companyId } = request.principal;
      const subscription = await requireSubscription(companyId, request.params.subscription_id);
      const since = new Date(request.body.since);
      const until = deps.now();
      if (since.getTime() > until.getTime()) throw invalidRequest([{ field: 'since', message: 'is in the future' }]);
      if (until.getTime() - since.getTime() > dryRunMaxDays * msPerDay) {
        throw invalidRequest([{ field: 'since', message: `must be at most ${dryRunMaxDays} days ago` }]);
      }
      const vehicle = await loadDryRunVehicle(deps.pool, companyId, subscription.vehicleId);
      if (!vehicle) throw notFound('monitoring subscription');
      const max = deps.config.monitoringDryRunMaxReadings;
      const bounded = <Key>(pages: AsyncIterable<JsonPage<Key>>, what: string) =>
        boundedPages(pages, max, () =>
          invalidRequest([
            { field: 'since', message: `the vehicle has more than ${max} ${what} since then; choose a later since` },
          ]),
        );
      const options = monitoringOptions(subscription.options);
      const services = await loadLastServices(deps.pool, [subscription.vehicleId]);
      const fenceIds = await loadGeofenceIds(deps.pool, companyId, options.geofenceIds);
      const fences = await deps.cpuPool.sharedFences(fenceIds, (ids) => loadGeofenceTexts(deps.pool, companyId, ids));
      // The window goes to a CPU-pool thread page by page as it is read (the readings, then the
      // provider events: a window over the bound is refused before the events are read); the replay
      // and the answer's JSON are made there, within the pool's budgets (422 past them).
      const data = await deps.cpuPool.dryRun(
        {
          vehicle: {
            telematicsProvider: vehicle.telematicsProvider,
            createdAt: vehicle.createdAt,
            lastServices: services.get(subscription.vehicleId) ?? {},
          },
          healthConfig: effectiveHealthConfig(vehicle.companyConfig, vehicle.vehicleConfig),
          kinds: subscription.events,
          options,
          now: until,
        },
        { subscriptionId: subscription.id, vehicleId: subscription.vehicleId, since },
        fences,
        {
          readings: bounded(
            readingPagesBetween(
              deps.pool,
              subscription.vehicleId,
              historySignals,
              since,
              until,
              max + 1,
              dryRunPageRows,
            ),
            'readings',
          ),
          events: bounded(
            vehicleEventPagesBetween(deps.pool, subscription.vehicleId, since, until, max + 1, dryRunPageRows),
            'provider events',
          ),
        },
        companyId,
      );
      // A Buffer is sent as it is: the JSON was made on the thread, in the response schema's shape.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(okJson(data));
    },
  );
};
