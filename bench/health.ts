/**
 * Health stage costs, in one run:
 * - the sweep: vehicle evaluations per second over 100,000 vehicles (the same code as the
 *   health.sweep job: pages of 500, one transaction each, HEALTH_SWEEP_CONCURRENT_PAGES at once),
 *   the first and the steady sweep's wall time each printed beside its target (issue 20), the
 *   steady one being the next scheduled sweep 15 minutes on, and a sweep with every vehicle due;
 * - the per-reading cost the rules add to ingestion: the ingest path with and without the health
 *   worker, same pushes, timed until everything (readings, state, health) is written.
 */
import { Queue } from 'bullmq';
import type { Pool } from '../src/db/pool.js';
import { recheckCompanyVehicles } from '../src/db/health.js';
import { sweepHealth } from '../src/evaluation/evaluate-vehicles.js';
import { sweepIntervalMs } from '../src/health/recheck.js';
import { benchFleet, generateBatches, pushBatch, pushConcurrency, seed } from './ingest.js';
import { createRedis } from '../src/queue/connection.js';
import {
  benchConfig,
  benchLog,
  freshDatabase,
  printTable,
  startCpuMeter,
  startService,
  type Service,
  serviceEnv,
} from './support.js';

const sweepVehicles = 100_000;
const ingestSamples = 300_000;

/** Seeds the sweep's fleet; answers its company's id. */
async function seedSweepFleet(pool: Pool): Promise<string> {
  const company = await pool.query<{ id: string }>(`INSERT INTO companies (name) VALUES ('Sweep Bench') RETURNING id`);
  // A realistic read model: each vehicle has an odometer, a last reading 1–10 days old (some turn
  // stale), and a few readings the first sweep feeds to the rules.
  // Times in milliseconds, as every ingested time is (it passes through a JavaScript Date): a
  // microsecond time stays newer than its signal's watermark (an ISO string) and is fed again by
  // every sweep.
  await pool.query(
    `INSERT INTO vehicles (company_id, name, telematics_provider, provider_vehicle_id, signals, as_of, created_at)
     SELECT $1, 'V' || i, 'samsara', 'sam-' || i,
            jsonb_build_object('odometer', jsonb_build_object('km', 50000 + i, 'as_of', date_trunc('milliseconds', now()) - ((i % 10) || ' days')::interval, 'source', 'samsara')),
            date_trunc('milliseconds', now()) - ((i % 10) || ' days')::interval, now() - interval '400 days'
     FROM generate_series(1, $2) AS i`,
    [company.rows[0]!.id, sweepVehicles],
  );
  await pool.query(
    `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, source)
     SELECT v.id, s.signal, v.as_of - (s.n || ' minutes')::interval, s.value, 'samsara'
     FROM vehicles v
     CROSS JOIN (VALUES ('odometer_km', 0, 50000.0), ('battery_voltage', 1, 12.6), ('fuel_percent', 2, 55.0), ('coolant_temp_c', 3, 88.0)) AS s(signal, n, value)`,
  );
  // Ingest keeps each signal's latest sample in the vehicle row beside the readings (its time under
  // observed_at, which the sweep reads first; the odometer's value in odometer_values).
  await pool.query(
    `WITH latest AS (
       SELECT DISTINCT ON (vehicle_id, signal) vehicle_id, signal, recorded_at, value_num
       FROM readings ORDER BY vehicle_id, signal, recorded_at DESC
     )
     UPDATE vehicles v SET
       signals = v.signals || l.values || jsonb_build_object('observed_at', l.observed),
       odometer_values = coalesce(l.odometers, '{}')
     FROM (
       SELECT vehicle_id,
              jsonb_object_agg(signal, value_num) FILTER (WHERE signal <> 'odometer_km') AS values,
              jsonb_object_agg(signal, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS observed,
              jsonb_object_agg(signal, value_num) FILTER (WHERE signal = 'odometer_km') AS odometers
       FROM latest GROUP BY vehicle_id
     ) l
     WHERE v.id = l.vehicle_id`,
  );
  return company.rows[0]!.id;
}

interface SweepRun {
  evaluated: number;
  seconds: number;
  /** CPU seconds of this process over the sweep (the sweep's JavaScript, pg's encoding and parsing). */
  nodeCpuSeconds: number;
  /** CPU seconds of the Postgres backends over the sweep, null when not measurable. */
  postgresCpuSeconds: number | null;
}

/** The health.sweep job's own loop, timed, with the CPU it took on each side. */
async function sweepOnce(pool: Pool, now: Date): Promise<SweepRun> {
  const meter = await startCpuMeter(pool, {});
  const started = process.hrtime.bigint();
  const { evaluated } = await sweepHealth(pool, () => now, benchConfig.healthSweepConcurrentPages);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = await meter();
  return {
    evaluated,
    seconds,
    nodeCpuSeconds: cpu.bench,
    postgresCpuSeconds: Number.isNaN(cpu.postgres) ? null : cpu.postgres,
  };
}

/** Issue 20's targets for the sweep of 100k vehicles, in wall seconds. */
const sweepTargets = { first: 5, steady: 3 } as const;

const verdict = (run: SweepRun, targetSeconds: number) => (run.seconds < targetSeconds ? 'met' : 'missed');

/** The sweep table: each sweep's rate and where its CPU went, then each wall time beside its target. */
function printSweeps(first: SweepRun, steady: SweepRun, everyVehicle: SweepRun): void {
  const row = (sweep: string, run: SweepRun) => ({
    sweep,
    evaluated: run.evaluated,
    'evaluations/s': Math.round(run.evaluated / run.seconds),
    seconds: run.seconds.toFixed(1),
    'node CPU s': run.nodeCpuSeconds.toFixed(1),
    'postgres CPU s': run.postgresCpuSeconds === null ? 'n/a' : run.postgresCpuSeconds.toFixed(1),
  });
  printTable(
    `Health sweep over ${sweepVehicles.toLocaleString()} vehicles (pages of 500, one transaction each, ${benchConfig.healthSweepConcurrentPages} at once)`,
    [
      row('first (feeds each vehicle its samples, creates the state)', first),
      row('steady: the next scheduled sweep, nothing new (recheck times reached, its quarter of the hour)', steady),
      row('every vehicle due, nothing new (as after a company override change)', everyVehicle),
    ],
  );
  for (const [name, run, target] of [
    ['first', first, sweepTargets.first],
    ['steady', steady, sweepTargets.steady],
  ] as const) {
    console.log(`${name} sweep ${run.seconds.toFixed(1)} s (target < ${target} s) ${verdict(run, target)}`);
  }
}

async function ingestRate(withHealth: boolean): Promise<{ samples: number; seconds: number; rate: number }> {
  const secret = 'bench-simulator-secret';
  const { url: databaseUrl, pool } = await freshDatabase(withHealth ? 'health_on' : 'health_off');
  const { connectionId, vehicleIds } = await seed(pool, secret);
  const batches = generateBatches(benchFleet(), ingestSamples, vehicleIds);
  const prefix = `{benchh${Date.now()}}`;
  const env = serviceEnv(databaseUrl, prefix);
  const services: Service[] = [];
  const redis = createRedis(benchConfig, 'worker', benchLog);
  const healthQueue = new Queue('health', { connection: redis, prefix });
  try {
    services.push(await startService('server/main.js', ['api'], env, 3921, '/readyz'));
    services.push(
      await startService(
        'server/main.js',
        ['worker', 'ingest', ...(withHealth ? ['health'] : [])],
        env,
        3922,
        '/readyz',
      ),
    );
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: pushConcurrency }, async () => {
        while (next < batches.length) {
          await pushBatch(services[0]!.url, connectionId, secret, batches[next++]!);
        }
      }),
    );
    for (;;) {
      const pending = (
        await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ingest_inbox WHERE processed_at IS NULL`)
      ).rows[0]!.n;
      const counts = withHealth ? await healthQueue.getJobCounts('waiting', 'active', 'prioritized') : {};
      if (pending === 0 && Object.values(counts).every((n) => n === 0)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (Date.now() - started) / 1000;
    const samples = (await pool.query<{ n: number }>(`SELECT count(*) AS n FROM readings`)).rows[0]!.n;
    return { samples, seconds, rate: Math.round(samples / seconds) };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await healthQueue.close();
    redis.disconnect();
    await pool.end();
  }
}

export async function benchHealth(): Promise<Record<string, unknown>> {
  const { pool } = await freshDatabase('health_sweep');
  console.log(`seeding ${sweepVehicles.toLocaleString()} vehicles…`);
  const companyId = await seedSweepFleet(pool);
  // Vacuumed, as a running fleet's tables are: otherwise autovacuum works through the freshly
  // written rows during the sweeps, and its backends count as the sweep's Postgres CPU. Again
  // between the sweeps, as autovacuum does in the 15 minutes between two scheduled sweeps with
  // the row versions the first one left.
  await pool.query('VACUUM (ANALYZE)');
  const firstAt = new Date();
  const first = await sweepOnce(pool, firstAt);
  await pool.query('VACUUM (ANALYZE)');
  // The next scheduled sweep: the vehicles whose recheck time came, and its share of the hourly full evaluation.
  const steady = await sweepOnce(pool, new Date(firstAt.getTime() + sweepIntervalMs));
  // What every steady sweep cost before recheck times: every vehicle evaluated, nothing new.
  await recheckCompanyVehicles(pool, companyId);
  await pool.query('VACUUM (ANALYZE)');
  const everyVehicle = await sweepOnce(pool, new Date(firstAt.getTime() + 2 * sweepIntervalMs));
  await pool.end();
  // Printed before the ingest part, which starts services of its own.
  printSweeps(first, steady, everyVehicle);

  const without = await ingestRate(false);
  const withRules = await ingestRate(true);
  const addedMicrosPerSample = (withRules.seconds / withRules.samples - without.seconds / without.samples) * 1e6;

  printTable(`Ingestion of ${ingestSamples.toLocaleString()} samples with and without the health stage`, [
    { path: 'ingest only (readings + state)', 'samples/s': without.rate, seconds: without.seconds.toFixed(1) },
    {
      path: 'ingest + health rules (until every evaluation is written)',
      'samples/s': withRules.rate,
      seconds: withRules.seconds.toFixed(1),
    },
  ]);
  console.log(
    `rules add ${addedMicrosPerSample.toFixed(1)} µs per sample of end-to-end time (${((1 - withRules.rate / without.rate) * 100).toFixed(0)} % of throughput)`,
  );
  return {
    sweep: {
      vehicles: sweepVehicles,
      first,
      steady,
      everyVehicle,
      targets: {
        firstSeconds: sweepTargets.first,
        first: verdict(first, sweepTargets.first),
        steadySeconds: sweepTargets.steady,
        steady: verdict(steady, sweepTargets.steady),
      },
      steadyEvaluationsPerSecond: Math.round(steady.evaluated / steady.seconds),
    },
    ingest: { without, withRules, addedMicrosPerSample },
  };
}
