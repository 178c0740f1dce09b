/**
 * A stream of signed generic pushes sent over real HTTP the way a provider sends them: several
 * in flight, and every push not answered 202 (connection refused or reset, 5xx, 429) sent again
 * until it is. Each reading is distinct (vehicle, signal, time), so what Postgres must hold at
 * the end is known exactly; the checks below count it.
 */
import { hmacHex } from '../../providers/signing.js';
import type { Pool } from '../../src/db/pool.js';
import { createConnection } from './ingest.js';
import type { TestApp } from './app.js';

export interface StreamConnection {
  id: string;
  secret: string;
  /** Provider vehicle ids, each mapped to a vehicle of the connection's company. */
  vehicles: string[];
}

export interface PlannedPush {
  connectionId: string;
  secret: string;
  body: string;
}

export interface ExpectedReading {
  connectionId: string;
  vehicle: string;
  signal: string;
  recordedAt: string;
  value: number;
}

export interface PushStreamPlan {
  pushes: PlannedPush[];
  readings: ExpectedReading[];
}

/** Both in range for every value below (0..99), so none is skipped by the adapter's checks. */
const streamSignals = ['speed_kph', 'fuel_percent'];

/**
 * `pushes` pushes of `readingsPerPush` readings, one signal each, taking turns over the
 * connections; reading n is at `start` + n seconds, on vehicle n mod fleet size.
 */
export function planPushStream(
  connections: readonly StreamConnection[],
  options: { pushes: number; readingsPerPush: number; start: Date; firstReading?: number },
): PushStreamPlan {
  const pushes: PlannedPush[] = [];
  const readings: ExpectedReading[] = [];
  let n = options.firstReading ?? 0;
  for (let p = 0; p < options.pushes; p++) {
    const connection = connections[p % connections.length]!;
    const entries = [];
    for (let i = 0; i < options.readingsPerPush; i++, n++) {
      const fleetSize = connection.vehicles.length;
      const reading: ExpectedReading = {
        connectionId: connection.id,
        vehicle: connection.vehicles[n % fleetSize]!,
        signal: streamSignals[Math.floor(n / fleetSize) % streamSignals.length]!,
        recordedAt: new Date(options.start.getTime() + n * 1000).toISOString(),
        value: n % 100,
      };
      readings.push(reading);
      entries.push({ vehicle: reading.vehicle, ts: reading.recordedAt, signals: { [reading.signal]: reading.value } });
    }
    pushes.push({
      connectionId: connection.id,
      secret: connection.secret,
      body: JSON.stringify({ readings: entries }),
    });
  }
  return { pushes, readings };
}

/** A company with a generic connection and `vehicleCount` vehicles mapped to it (ids `<label>-<n>`). */
export async function createStreamConnection(
  t: TestApp,
  label: string,
  vehicleCount: number,
): Promise<StreamConnection & { companyId: string; key: string }> {
  const company = await t.createCompany(`${label} Fleet`);
  const created = await createConnection(t, company.id, 'generic');
  const vehicles = Array.from({ length: vehicleCount }, (_, i) => `${label}-${i + 1}`);
  for (const vehicle of vehicles) {
    await t.createVehicle(company.id, {
      name: vehicle,
      provider_connection_id: created.id,
      provider_vehicle_id: vehicle,
    });
  }
  return { id: created.id, secret: created.generated_secret!, vehicles, companyId: company.id, key: company.key };
}

export function signedGenericPush(apiUrl: string, push: PlannedPush): Promise<Response> {
  return fetch(`${apiUrl}/ingest/v1/generic/${push.connectionId}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature': `sha256=${hmacHex('sha256', push.secret, push.body)}`,
    },
    body: push.body,
    signal: AbortSignal.timeout(20_000),
  });
}

export interface PushStreamResult {
  /** Pushes answered 202 (each once, however many tries it took). */
  accepted: number;
  /** Tries that were not answered 202 (refused, reset, 5xx, 429) and were sent again. */
  retries: number;
}

export interface RunningPushStream {
  /** Resolves once at least `count` pushes were answered 202. */
  until(count: number): Promise<void>;
  done: Promise<PushStreamResult>;
}

const retryDelayMs = 100;
const concurrency = 8;
/** Longest a stream may take, retries included. */
const streamTimeoutMs = 120_000;

/**
 * Sends every push, eight at a time, to `apiUrl()` (read again on every try, so a test can move
 * the stream to another process). A push answered with another 4xx fails the stream.
 */
export function startPushStream(pushes: readonly PlannedPush[], options: { apiUrl: () => string }): RunningPushStream {
  const deadline = Date.now() + streamTimeoutMs;
  const result: PushStreamResult = { accepted: 0, retries: 0 };
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let next = 0;
  let failed = false;

  const retry = async (cause: string) => {
    result.retries++;
    if (Date.now() > deadline) throw new Error(`push stream timed out retrying (last: ${cause})`);
    await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
  };

  const send = async (push: PlannedPush) => {
    for (;;) {
      let response: Response;
      try {
        response = await signedGenericPush(options.apiUrl(), push);
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        await retry(cause);
        continue;
      }
      const body = await response.text().catch(() => '');
      if (response.status === 202) return;
      if (response.status >= 500 || response.status === 429) {
        await retry(String(response.status));
        continue;
      }
      throw new Error(`push answered ${response.status}: ${body}`);
    }
  };

  const lane = async () => {
    while (!failed && next < pushes.length) {
      const push = pushes[next++]!;
      await send(push);
      result.accepted++;
      for (const waiter of waiters.filter((w) => w.count <= result.accepted)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  const done = Promise.all(Array.from({ length: concurrency }, lane)).then(
    () => result,
    (error: unknown) => {
      failed = true;
      throw error;
    },
  );
  return {
    until: (count) =>
      result.accepted >= count
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ count, resolve });
            done.then(() => reject(new Error(`the stream ended with ${result.accepted} pushes accepted`)), reject);
          }),
    done,
  };
}

function expectedJson(readings: readonly ExpectedReading[]): string {
  return JSON.stringify(
    readings.map((r) => ({ c: r.connectionId, v: r.vehicle, s: r.signal, t: r.recordedAt, n: r.value })),
  );
}

const expectedRows = `json_to_recordset($1::json) AS e(c uuid, v text, s text, t timestamptz, n float8)
  JOIN vehicles ve ON ve.provider_connection_id = e.c AND ve.provider_vehicle_id = e.v`;

/** Readings stored for the connections' vehicles, and how many of them are exactly the expected ones. */
export async function countReadings(
  pool: Pool,
  expected: readonly ExpectedReading[],
): Promise<{ stored: number; matching: number }> {
  const connectionIds = [...new Set(expected.map((r) => r.connectionId))];
  const stored = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM readings r JOIN vehicles ve ON ve.id = r.vehicle_id
     WHERE ve.provider_connection_id = ANY($1::uuid[])`,
    [connectionIds],
  );
  const matching = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${expectedRows}
     JOIN readings r ON r.vehicle_id = ve.id AND r.signal = e.s AND r.recorded_at = e.t AND r.value_num = e.n`,
    [expectedJson(expected)],
  );
  return { stored: stored.rows[0]!.n, matching: matching.rows[0]!.n };
}

/** The newest expected reading of each vehicle and signal. */
export function latestReadings(expected: readonly ExpectedReading[]): ExpectedReading[] {
  const latest = new Map<string, ExpectedReading>();
  for (const reading of expected) {
    const key = `${reading.connectionId}/${reading.vehicle}/${reading.signal}`;
    const current = latest.get(key);
    if (!current || reading.recordedAt > current.recordedAt) latest.set(key, reading);
  }
  return [...latest.values()];
}

/**
 * How the latest state agrees with the newest readings: the signals the connections' vehicles
 * hold a latest sample of (keys of `signals.observed_at`), and how many vehicle rows show the
 * newest reading's value and time.
 */
export async function countLatestState(
  pool: Pool,
  expected: readonly ExpectedReading[],
): Promise<{ latest: number; signals: number; matching: number }> {
  const latest = latestReadings(expected);
  const connectionIds = [...new Set(expected.map((r) => r.connectionId))];
  const signals = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM vehicles ve CROSS JOIN jsonb_object_keys(ve.signals -> 'observed_at')
     WHERE ve.provider_connection_id = ANY($1::uuid[])`,
    [connectionIds],
  );
  const matching = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n
     FROM ${expectedRows}
     WHERE (ve.signals ->> e.s)::float8 = e.n AND (ve.signals -> 'observed_at' ->> e.s)::timestamptz = e.t`,
    [expectedJson(latest)],
  );
  return { latest: latest.length, signals: signals.rows[0]!.n, matching: matching.rows[0]!.n };
}

export interface InboxSummary {
  rows: number;
  /** Distinct payloads: a push sent again after its first try was stored unanswered is one payload, two rows. */
  payloads: number;
  pending: number;
  errors: number;
  /** Distinct payloads whose row(s) counted exactly `readingsPerPush` samples. */
  payloadsWithAllSamples: number;
}

export async function inboxSummary(pool: Pool, connectionIds: readonly string[], readingsPerPush: number) {
  const { rows } = await pool.query<InboxSummary>(
    `SELECT count(*)::int AS rows, count(DISTINCT md5(payload))::int AS payloads,
            count(*) FILTER (WHERE processed_at IS NULL)::int AS pending,
            count(*) FILTER (WHERE error IS NOT NULL)::int AS errors,
            count(DISTINCT md5(payload)) FILTER (WHERE samples_count = $2)::int AS "payloadsWithAllSamples"
     FROM ingest_inbox WHERE connection_id = ANY($1::uuid[])`,
    [connectionIds, readingsPerPush],
  );
  return rows[0]!;
}
