/**
 * API read path under concurrent load, beside two ceilings measured in the same run on the same
 * machine: a Fastify hello-world route, and a bare Fastify route running the product's own by-id
 * and list queries with `pg` (bench/bare-pg-server.ts). GET /api/v1/vehicles/{id} (random ids)
 * and GET /api/v1/vehicles?limit=200, 50 connections. Targets (issue 12): by-id ≥ 0.95 × the
 * bare by-id with p99 < 10 ms; list of 200 ≥ 3 × the bare list.
 * `--replica-url postgres://host:port` (a streaming replica of the cluster the bench uses,
 * docs/scaling.md "Read replicas"): a second API process reads through DATABASE_REPLICA_URLS, and
 * both routes are measured on it too, beside the primary-only figures, with the share of its reads
 * that the replica served.
 */
import type autocannon from 'autocannon';
import pg from 'pg';
import {
  createBenchCompany,
  freshDatabase,
  load,
  printTable,
  startCpuMeter,
  startService,
  type LoadResult,
  type Service,
} from './support.js';

const vehicleCount = 1000;
const connections = 50;
const durationSeconds = 10;

async function seed(
  pool: import('../src/db/pool.js').Pool,
): Promise<{ key: string; ids: string[]; companyId: string }> {
  const { companyId, key } = await createBenchCompany(pool, 'Bench Fleet');
  // Realistic read-model rows: a full signal set, two alerts, per-signal times.
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO vehicles (company_id, name, vin, license_plate, make, model, year, telematics_provider, provider_vehicle_id,
                           signals, health, as_of, updated_at)
     SELECT $1, 'Truck ' || i, '1M8GDM9AXKP' || lpad(i::text, 6, '0'), 'TR-' || i, 'Freightliner', 'Cascadia', 2019 + i % 6,
            'samsara', 'sam-' || i,
            jsonb_build_object(
              'odometer', jsonb_build_object('km', 100000 + i * 13.7, 'as_of', now() - interval '5 minutes', 'source', 'samsara'),
              'fuel_percent', 20 + i % 80, 'battery_voltage', 12.2 + (i % 20) / 10.0, 'coolant_temp_c', 85 + i % 10,
              'engine_state', 'on', 'speed_kph', i % 100,
              'location', jsonb_build_object('lat', 41.85 + i / 10000.0, 'lon', -87.65, 'heading', i % 360, 'as_of', now()),
              'tire_pressure_kpa', jsonb_build_object('front_left', 758, 'front_right', 760, 'rear_left', 752, 'rear_right', 755),
              'dtcs', jsonb_build_array(jsonb_build_object('code', 'P0420', 'system', 'powertrain', 'mil', false)),
              'check_engine_light', false, 'engine_hours', 4000 + i),
            jsonb_build_object('status', 'needs_attention', 'alerts', jsonb_build_array(
              jsonb_build_object('severity', 'low', 'type', 'oil_change', 'display_name', 'Oil change due in 320 mi', 'due_date', '2026-12-20', 'due_miles_remaining', 320),
              jsonb_build_object('severity', 'medium', 'type', 'fuel_level_low', 'display_name', 'Fuel low', 'due_date', null, 'due_miles_remaining', null))),
            now(), now() - (i || ' seconds')::interval
     FROM generate_series(1, $2) AS i
     RETURNING id`,
    [companyId, vehicleCount],
  );
  return { key, ids: rows.map((r) => r.id), companyId };
}

/** The replica's URL for the bench database, once it has replayed the seeded vehicles. */
async function replicaOfBench(replicaUrl: string, databaseUrl: string, companyId: string): Promise<string> {
  const url = new URL(replicaUrl);
  url.pathname = new URL(databaseUrl).pathname;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url.toString() });
    const seeded = await client
      .connect()
      .then(() => client.query('SELECT count(*)::int AS n FROM vehicles WHERE company_id = $1', [companyId]))
      .then((result) => result.rows[0].n === vehicleCount)
      .catch(() => false)
      .finally(() => client.end().catch(() => {}));
    if (seeded) return url.toString();
    if (Date.now() > deadline) throw new Error(`the replica at ${url.host} did not show the bench's vehicles in 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Requests whose reads the API process sent to a replica, and in all, from its /metrics. */
async function routedReads(baseUrl: string): Promise<{ replica: number; all: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let replica = 0;
  let all = 0;
  for (const [, target, value] of text.matchAll(/^db_reads_routed_total\{target="([^"]+)"[^}]*\} (\d+)$/gm)) {
    all += Number(value);
    if (target !== 'primary') replica += Number(value);
  }
  return { replica, all };
}

/** Load of GETs by id on `base`, cycling through `ids`; `path` makes each request's path from an id. */
export function byIdLoad(
  common: autocannon.Options | Omit<autocannon.Options, 'url'>,
  base: string,
  ids: readonly string[],
  path: (id: string) => string,
  headers: Record<string, string> = {},
): autocannon.Options {
  let next = 0;
  return {
    ...common,
    url: base,
    requests: [
      {
        method: 'GET' as const,
        headers,
        setupRequest: (request: object) => ({ ...request, path: path(ids[next++ % ids.length]!) }),
      },
    ],
  };
}

export async function benchApi(args: string[] = []): Promise<Record<string, unknown>> {
  const replicaFlag = args.indexOf('--replica-url');
  const replicaUrl = replicaFlag >= 0 ? args[replicaFlag + 1] : undefined;
  const { url: databaseUrl, pool } = await freshDatabase('api');
  const { key, ids, companyId } = await seed(pool);

  const services: Service[] = [];
  try {
    const hello = await startService('bench/hello-server.js', ['3901'], {}, 3901, '/');
    services.push(hello);
    const bare = await startService('bench/bare-pg-server.js', ['3903', databaseUrl, companyId], {}, 3903, '/ready');
    services.push(bare);
    const api = await startService(
      'server/main.js',
      ['api'],
      {
        DATABASE_URL: databaseUrl,
        DATABASE_REPLICA_URLS: '',
        RATE_LIMIT_PER_MINUTE: '10000000',
        ADMIN_TOKEN: '',
        DATABASE_POOL_SIZE: '10',
      },
      3902,
      '/readyz',
    );
    services.push(api);
    const viaReplica = replicaUrl
      ? await startService(
          'server/main.js',
          ['api'],
          {
            DATABASE_URL: databaseUrl,
            DATABASE_REPLICA_URLS: await replicaOfBench(replicaUrl, databaseUrl, companyId),
            RATE_LIMIT_PER_MINUTE: '10000000',
            ADMIN_TOKEN: '',
            DATABASE_POOL_SIZE: '10',
          },
          3904,
          '/readyz',
        )
      : null;
    if (viaReplica) services.push(viaReplica);
    const headers = { authorization: `Bearer ${key}` };
    const common = { connections, duration: durationSeconds, pipelining: 1 };

    // Warm up the JIT, the pg connections and prepared statements before measuring.
    await load({ ...common, url: hello.url, duration: 2 });
    await load({ ...common, url: `${api.url}/api/v1/vehicles/${ids[0]}`, headers, duration: 2 });
    await load({ ...common, url: `${bare.url}/vehicles/${ids[0]}`, duration: 2 });

    const byId = (base: string, path: (id: string) => string, extra: Record<string, string> = {}) =>
      byIdLoad(common, base, ids, path, extra);
    const results: Record<string, LoadResult & { postgresMicrosPerRequest?: number }> = {};
    // Postgres CPU per request beside the server's: what a route costs the database, which the
    // API and the bare route share (the request log's batches land in the product's figure).
    const measured = async (options: autocannon.Options, server: Service) => {
      const stopMeter = await startCpuMeter(pool, {});
      const result = await load(options, server);
      const { postgres } = await stopMeter();
      return { ...result, postgresMicrosPerRequest: Math.round((postgres * 1e6) / result.requests) };
    };
    results.helloWorld = await load({ ...common, url: hello.url }, hello);
    // Ceiling and product alternate, so a drift of the machine touches both alike.
    results.barePgById = await measured(
      byId(bare.url, (id) => `/vehicles/${id}`),
      bare,
    );
    results.vehicleById = await measured(
      byId(api.url, (id) => `/api/v1/vehicles/${id}`, headers),
      api,
    );
    if (viaReplica) {
      await load({ ...common, url: `${viaReplica.url}/api/v1/vehicles/${ids[0]}`, headers, duration: 2 });
      results.vehicleByIdReplica = await measured(
        byId(viaReplica.url, (id) => `/api/v1/vehicles/${id}`, headers),
        viaReplica,
      );
    }
    results.barePgList200 = await measured({ ...common, url: `${bare.url}/vehicles` }, bare);
    results.vehicleList200 = await measured({ ...common, url: `${api.url}/api/v1/vehicles?limit=200`, headers }, api);
    if (viaReplica) {
      results.vehicleList200Replica = await measured(
        { ...common, url: `${viaReplica.url}/api/v1/vehicles?limit=200`, headers },
        viaReplica,
      );
    }

    const ceilingOf: Record<string, string> = {
      helloWorld: 'helloWorld',
      barePgById: 'helloWorld',
      vehicleById: 'barePgById',
      barePgList200: 'barePgList200',
      vehicleList200: 'barePgList200',
      vehicleByIdReplica: 'barePgById',
      vehicleList200Replica: 'barePgList200',
    };
    const ratio = (name: string) => results[name]!.requestsPerSecond / results[ceilingOf[name]!]!.requestsPerSecond;
    printTable(
      `API read path, ${connections} connections, ${durationSeconds}s each, ${vehicleCount} vehicles`,
      Object.entries(results).map(([name, r]) => ({
        route: name,
        'req/s': r.requestsPerSecond,
        'p50 ms': r.p50Ms,
        'p99 ms': r.p99Ms,
        ceiling: ceilingOf[name]!,
        ratio: ratio(name).toFixed(3),
        'server CPU %': r.serverCpuPercent ?? '-',
        'server µs/req': r.serverCpuMicrosPerRequest ?? '-',
        'Postgres µs/req': r.postgresMicrosPerRequest ?? '-',
        'server RSS MB': r.serverRssMb ?? '-',
        'non-2xx': r.non2xx,
        errors: r.errors,
      })),
    );
    const byIdRatio = ratio('vehicleById');
    const listRatio = ratio('vehicleList200');
    const byIdTarget = byIdRatio >= 0.95 && results.vehicleById!.p99Ms < 10 ? 'met' : 'missed';
    const listTarget = listRatio >= 3 ? 'met' : 'missed';
    console.log(`target by-id ≥ 0.95 × bare pg and p99 < 10 ms: ${byIdTarget} (${byIdRatio.toFixed(3)})`);
    console.log(`target list of 200 ≥ 3 × bare pg: ${listTarget} (${listRatio.toFixed(3)})`);
    const replicaReads = viaReplica ? await routedReads(viaReplica.url) : null;
    if (replicaReads) {
      console.log(
        `through the replica: by-id ${results.vehicleByIdReplica!.requestsPerSecond} req/s against ` +
          `${results.vehicleById!.requestsPerSecond} primary-only; list of 200 ${results.vehicleList200Replica!.requestsPerSecond} ` +
          `against ${results.vehicleList200!.requestsPerSecond}; ${replicaReads.replica} of ${replicaReads.all} requests read from the replica`,
      );
    }
    return {
      replicaReads,
      connections,
      durationSeconds,
      vehicleCount,
      results,
      byIdRatio,
      listRatio,
      byIdTarget,
      listTarget,
    };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await pool.end();
  }
}
