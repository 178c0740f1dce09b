/**
 * End-to-end ingestion beside its physical ceiling, in one run:
 * - the real path: signed HTTP pushes of simulator batches → inbox → ingest worker → readings and
 *   latest vehicle state, with the API and the worker as separate processes;
 * - the ceiling: the same reading rows COPYed (10k-row batches) into an identical bare table.
 * Prints readings/s for both and their ratio, push-to-visible latency p50/p99, and the memory of
 * each process as the volume grows, flat or grew by a stated rule. Targets: end-to-end ≥ 0.45 ×
 * COPY (issue 20), memory flat (issue 12). Options: `--readings N`, `--apis N` and `--workers M` (several
 * processes), `--health` (a health worker process too), `--worker-heap-mb N` (workers' old space cap),
 * `--worker-heap-snapshots DIR` (a heap snapshot of each worker at 10 % and 90 % of its volume, into DIR).
 */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { mkdirSync } from 'node:fs';
import copyStreams from 'pg-copy-streams';
import { normalizeGeneric } from '../providers/generic.js';
import { createSimulatedFleet } from '../server/simulated-fleet.js';
import { signSimulatedBody } from '../providers/simulator.js';
import type { Pool } from '../src/db/pool.js';
import { encryptJson } from '../src/security/secrets.js';
import { Queues } from '../src/queue/queues.js';
import { createRedis } from '../src/queue/connection.js';
import {
  benchConfig,
  benchLog,
  freshDatabase,
  memoryOf,
  metricSum,
  mirrorReadings,
  percentile,
  printTable,
  startServices,
  type Service,
  serviceEnv,
} from './support.js';

const vehicleCount = 1000;
const readingsPerPush = 100;
export const pushConcurrency = 8;
const copyBatchRows = 10_000;
/** End to end against COPY of the same rows (issue 20). */
const ratioTarget = 0.45;

export interface Batch {
  body: string;
  samples: number;
}

type Fleet = ReturnType<typeof createSimulatedFleet>;

export function benchFleet(): Fleet {
  return createSimulatedFleet({ seed: 42, vehicleCount, start: new Date('2026-11-02T06:00:00Z'), idPrefix: 'bench' });
}

/** Simulator batches holding at least `target` samples, generated before the clock starts. */
export function generateBatches(fleet: Fleet, target: number, vehicleIds: string[]): Batch[] {
  const known = new Set(vehicleIds);
  const batches: Batch[] = [];
  let total = 0;
  while (total < target) {
    const { payload } = fleet.tick(30);
    for (let i = 0; i < payload.readings.length && total < target; i += readingsPerPush) {
      const body = JSON.stringify({ readings: payload.readings.slice(i, i + readingsPerPush) });
      const normalized = normalizeGeneric({ contentType: 'application/json', body });
      const samples = normalized.ok ? normalized.samples.filter((s) => known.has(s.providerVehicleId)).length : 0;
      batches.push({ body, samples });
      total += samples;
    }
  }
  return batches;
}

/** One signed simulator push through the real endpoint; resolves to its inbox id. */
export async function pushBatch(apiUrl: string, connectionId: string, secret: string, batch: Batch): Promise<number> {
  const response = await fetch(`${apiUrl}/ingest/v1/simulator/${connectionId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-signature': signSimulatedBody(batch.body, secret) },
    body: batch.body,
  });
  if (response.status !== 202) throw new Error(`push answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { data: { inbox_id: number } }).data.inbox_id;
}

export async function seed(pool: Pool, secret: string): Promise<{ connectionId: string; vehicleIds: string[] }> {
  const company = await pool.query<{ id: string }>(`INSERT INTO companies (name) VALUES ('Ingest Bench') RETURNING id`);
  const connection = await pool.query<{ id: string }>(
    `INSERT INTO provider_connections (company_id, provider, config_ciphertext) VALUES ($1, 'simulator', $2) RETURNING id`,
    [company.rows[0]!.id, encryptJson(benchConfig.secretsKey, { webhook_secret: secret })],
  );
  const fleet = benchFleet();
  await pool.query(
    `INSERT INTO vehicles (company_id, name, vin, telematics_provider, provider_connection_id, provider_vehicle_id)
     SELECT $1, v.name, v.vin, 'simulator', $2, v.id FROM unnest($3::text[], $4::text[], $5::text[]) AS v(id, name, vin)`,
    [
      company.rows[0]!.id,
      connection.rows[0]!.id,
      fleet.vehicles.map((v) => v.providerVehicleId),
      fleet.vehicles.map((v) => v.name),
      fleet.vehicles.map((v) => v.vin),
    ],
  );
  return { connectionId: connection.rows[0]!.id, vehicleIds: fleet.vehicles.map((v) => v.providerVehicleId) };
}

const healthWorkerPort = 3951;
/** Memory is flat when no later point exceeds the RSS at 10 % of the volume by more than this factor. */
const flatFactor = 1.25;

/** The shares of its volume at which a process's memory is read: pushes accepted for an API, pushes processed for a worker. */
const memoryCheckpoints = [0.1, 0.25, 0.5, 0.75, 1];
/**
 * The shares of pushes processed at which `--worker-heap-snapshots` has each worker write a heap
 * snapshot: what two of them hold by constructor tells data kept from V8 sizing its heap. Writing
 * one stops the worker for seconds and doubles its heap meanwhile, so such a run's rate and RSS
 * are not figures.
 */
const snapshotShares = [0.1, 0.9];

interface ProcessMemory {
  name: string;
  pid: number;
  url: string;
  kind: 'api' | 'worker';
  /** RSS at each checkpoint reached, then at the end of the run. */
  rssMiB: number[];
  /**
   * V8's heap at the same points (its /metrics): `used` holds live objects and garbage not yet
   * collected, `total` what V8 has reserved for the heap. RSS that follows `total` while `used`
   * keeps no trend is V8 sizing its heap, not data kept.
   */
  heap: Array<Promise<{ usedMiB: number; totalMiB: number } | null>>;
}

/** A gauge of the process's /metrics in MiB (every metric there carries the process label). */
const heapMetric = (text: string, name: string) =>
  Math.round(Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20);

function readMemory(process: ProcessMemory): void {
  process.rssMiB.push(memoryOf(process.pid).rssMiB);
  process.heap.push(
    fetch(`${process.url}/metrics`)
      .then((response) => response.text())
      .then(
        (text) => ({
          usedMiB: heapMetric(text, 'nodejs_heap_size_used_bytes'),
          totalMiB: heapMetric(text, 'nodejs_heap_size_total_bytes'),
        }),
        () => null,
      ),
  );
}

/** Per process: flat or grew (every later point against the first, at 10 % of its volume), and its peak. */
function memoryVerdicts(processes: ProcessMemory[]) {
  return processes.map(({ name, pid, rssMiB: [first, ...later] }) => ({
    process: name,
    rssMiB: [first!, ...later],
    peakMiB: memoryOf(pid).peakMiB,
    verdict: later.every((rss) => rss <= flatFactor * first!) ? 'flat' : 'grew',
  }));
}

/** COPY of the rows stored before `until` (the throughput phase), timed, into an identical bare table. */
async function copyCeiling(pool: Pool, until: Date): Promise<{ rows: number; seconds: number }> {
  await mirrorReadings(pool, 'readings_bare', 'INCLUDING ALL');
  // The exact rows the pipeline stored, as COPY text, read before the clock starts.
  const client = await pool.connect();
  const chunks: Buffer[] = [];
  const select = `SELECT vehicle_id, signal, recorded_at, value_num, value_json, source FROM readings WHERE received_at < '${until.toISOString()}'`;
  await pipeline(client.query(copyStreams.to(`COPY (${select}) TO STDOUT`)), async function (source) {
    for await (const chunk of source) chunks.push(chunk as Buffer);
  });
  const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  const started = process.hrtime.bigint();
  for (let i = 0; i < lines.length; i += copyBatchRows) {
    const batch = `${lines.slice(i, i + copyBatchRows).join('\n')}\n`;
    await pipeline(
      Readable.from([batch]),
      client.query(
        copyStreams.from(
          `COPY readings_bare (vehicle_id, signal, recorded_at, value_num, value_json, source) FROM STDIN`,
        ),
      ),
    );
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  client.release();
  return { rows: lines.length, seconds };
}

export async function benchIngest(args: string[]): Promise<Record<string, unknown>> {
  const option = (name: string, fallback: number) => {
    const flag = args.indexOf(name);
    return flag >= 0 ? Number(args[flag + 1]) : fallback;
  };
  const target = option('--readings', 1_000_000);
  // Scale-out: several API and ingest worker processes at once (docs/scaling.md).
  const apiCount = option('--apis', 1);
  const workerCount = option('--workers', 1);
  // The health stage (health rules + monitoring detection) in its own process, so its memory is measured too.
  const withHealth = args.includes('--health');
  // Caps the workers' V8 old space: a run that completes under a small cap shows resident memory
  // growing with the volume is the collector's lazy sizing, not data kept (bench/monitoring.ts).
  const workerHeapMiB = option('--worker-heap-mb', 0);
  const snapshotFlag = args.indexOf('--worker-heap-snapshots');
  const snapshotDir = snapshotFlag >= 0 ? args[snapshotFlag + 1] : undefined;
  const secret = 'bench-simulator-secret';
  const { url: databaseUrl, pool } = await freshDatabase('ingest');
  const { connectionId, vehicleIds } = await seed(pool, secret);
  console.log(`generating ${target.toLocaleString()} samples of ${vehicleCount} simulated vehicles…`);
  const fleet = benchFleet();
  const batches = generateBatches(fleet, target, vehicleIds);
  const prefix = `{bench${Date.now()}}`;
  const env = serviceEnv(databaseUrl, prefix);
  const nodeOptions = [
    ...(workerHeapMiB > 0 ? [`--max-old-space-size=${workerHeapMiB}`] : []),
    ...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : []),
  ];
  const workerEnv = nodeOptions.length > 0 ? { ...env, NODE_OPTIONS: nodeOptions.join(' ') } : env;
  if (workerHeapMiB > 0) console.log(`worker old space capped at ${workerHeapMiB} MiB`);
  if (snapshotDir) {
    mkdirSync(snapshotDir, { recursive: true });
    console.log(`worker heap snapshots at ${snapshotShares.join(', ')} of the volume into ${snapshotDir}`);
  }
  const redis = createRedis(benchConfig, 'worker', benchLog);
  const queues = new Queues(redis, prefix);

  const services: Service[] = [];
  try {
    const apis = await startServices(apiCount, 'server/main.js', ['api'], env, 3911, 2);
    services.push(...apis);
    const workers = await startServices(workerCount, 'server/main.js', ['worker', 'ingest'], workerEnv, 3912, 2);
    services.push(...workers);
    const healthWorkers = withHealth
      ? await startServices(1, 'server/main.js', ['worker', 'health'], workerEnv, healthWorkerPort)
      : [];
    services.push(...healthWorkers);
    const processes: ProcessMemory[] = [
      ...apis.map((s, i) => ({
        name: `api ${i + 1}`,
        pid: s.process.pid!,
        url: s.url,
        kind: 'api' as const,
        rssMiB: [],
        heap: [],
      })),
      ...workers.map((s, i) => ({
        name: `ingest worker ${i + 1}`,
        pid: s.process.pid!,
        url: s.url,
        kind: 'worker' as const,
        rssMiB: [],
        heap: [],
      })),
      ...healthWorkers.map((s) => ({
        name: 'health worker',
        pid: s.process.pid!,
        url: s.url,
        kind: 'worker' as const,
        rssMiB: [],
        heap: [],
      })),
    ];
    const readCheckpoints = (kind: ProcessMemory['kind'], share: number, reached: number) => {
      const count = memoryCheckpoints.filter((c) => share >= c).length;
      for (; reached < count; reached++) for (const p of processes) if (p.kind === kind) readMemory(p);
      return reached;
    };
    const sentAt = new Map<number, number>();
    let pushed = 0;
    let apiCheckpoints = 0;
    const pushOne = async (batch: Batch) => {
      const sendTime = Date.now();
      const via = apis[pushed % apis.length]!;
      sentAt.set(await pushBatch(via.url, connectionId, secret, batch), sendTime);
      pushed++;
      apiCheckpoints = readCheckpoints('api', pushed / batches.length, apiCheckpoints);
    };
    const waitVisible = async () => {
      for (;;) {
        const { rows } = await pool.query<{ n: number }>(
          `SELECT count(*) AS n FROM ingest_inbox WHERE processed_at IS NULL`,
        );
        if (rows[0]!.n === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const latenciesSince = async (firstId: number) => {
      const { rows } = await pool.query<{ id: number; processedAt: Date }>(
        `SELECT id, processed_at AS "processedAt" FROM ingest_inbox WHERE id >= $1`,
        [firstId],
      );
      return {
        finished: Math.max(...rows.map((r) => r.processedAt.getTime())),
        latencies: rows.map((r) => r.processedAt.getTime() - sentAt.get(r.id)!).sort((a, b) => a - b),
      };
    };

    // Phase 1, throughput: push as fast as the API accepts; the worker drains the backlog.
    let workerCheckpoints = 0;
    let snapshotsTaken = 0;
    const workerPoll = setInterval(() => {
      void pool
        .query<{ n: number }>(`SELECT count(*)::int AS n FROM ingest_inbox WHERE processed_at IS NOT NULL`)
        .then(({ rows }) => {
          const share = rows[0]!.n / batches.length;
          workerCheckpoints = readCheckpoints('worker', share, workerCheckpoints);
          for (; snapshotDir && share >= (snapshotShares[snapshotsTaken] ?? Infinity); snapshotsTaken++)
            for (const w of workers) w.process.kill('SIGUSR2');
        });
    }, 250);
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: pushConcurrency }, async () => {
        while (next < batches.length) await pushOne(batches[next++]!);
      }),
    );
    const pushSeconds = (Date.now() - started) / 1000;
    await waitVisible();
    clearInterval(workerPoll);
    workerCheckpoints = readCheckpoints('worker', 1, workerCheckpoints);
    const saturated = await latenciesSince(0);
    // The health stage drains its own backlog after the readings are visible.
    let healthSeconds: number | null = null;
    if (withHealth) {
      const healthQueue = queues.queue('health');
      while (Object.values(await healthQueue.getJobCounts('waiting', 'active', 'prioritized')).some((n) => n > 0))
        await new Promise((resolve) => setTimeout(resolve, 100));
      healthSeconds = (Date.now() - started) / 1000;
    }
    for (const p of processes) readMemory(p);
    const stored = (await pool.query<{ n: number }>(`SELECT count(*) AS n FROM readings`)).rows[0]!.n;
    const e2eSeconds = (saturated.finished - started) / 1000;
    const e2eRate = Math.round(stored / e2eSeconds);

    // Phase 2, latency: pushes paced at half the measured throughput for 10 s, so nothing queues up.
    const phaseTwo = new Date();
    const paced = generateBatches(fleet, Math.round(e2eRate * 0.5 * 10), vehicleIds);
    const firstPacedId = Math.max(...sentAt.keys()) + 1;
    const intervalMs = 10_000 / paced.length;
    const pacedStart = Date.now();
    await Promise.all(
      paced.map(async (batch, i) => {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, pacedStart + i * intervalMs - Date.now())));
        await pushOne(batch);
      }),
    );
    await waitVisible();
    const unloaded = await latenciesSince(firstPacedId);

    const copy = await copyCeiling(pool, phaseTwo);
    const copyRate = Math.round(copy.rows / copy.seconds);
    const ratio = e2eRate / copyRate;

    printTable(
      `Ingestion, ${stored.toLocaleString()} readings from ${batches.length} pushes of ${readingsPerPush} vehicle readings, ${pushConcurrency} concurrent`,
      [
        {
          path: 'end to end (push → inbox → worker → readings + state)',
          'readings/s': e2eRate,
          seconds: e2eSeconds.toFixed(1),
        },
        {
          path: 'raw COPY of the same rows (10k-row batches)',
          'readings/s': copyRate,
          seconds: copy.seconds.toFixed(1),
        },
      ],
    );
    console.log(
      `ratio end-to-end / COPY: ${ratio.toFixed(3)} (target ≥ ${ratioTarget}: ${ratio >= ratioTarget ? 'met' : 'missed'})`,
    );
    console.log(`all pushes accepted in ${pushSeconds.toFixed(1)} s (the worker then drains the backlog)`);
    console.log(
      `push-to-visible latency at 50 % of max rate: p50 ${percentile(unloaded.latencies, 50)} ms, p99 ${percentile(unloaded.latencies, 99)} ms`,
    );
    console.log(
      `push-to-visible latency under the saturating burst (queueing included): p50 ${percentile(saturated.latencies, 50)} ms, p99 ${percentile(saturated.latencies, 99)} ms`,
    );
    // Nothing lost or doubled: every inbox row processed, and the readings stored are what they counted.
    const counted = (
      await pool.query<{ n: number }>(`SELECT coalesce(sum(samples_count), 0)::int AS n FROM ingest_inbox`)
    ).rows[0]!.n;
    const allReadings = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM readings`)).rows[0]!.n;
    const perWorker = await Promise.all(
      workers.map((w) => metricSum(w.url, 'job_duration_seconds_count', { queue: 'ingest', outcome: 'completed' })),
    );
    console.log(
      `${apiCount} API and ${workerCount} worker processes; ingest jobs completed per worker: ${perWorker.join(', ')}; ` +
        `readings stored ${allReadings.toLocaleString()}, counted by the inbox ${counted.toLocaleString()}: ${allReadings === counted ? 'none lost or doubled' : 'MISMATCH'}`,
    );
    if (healthSeconds !== null)
      console.log(
        `health stage (rules + monitoring detection) done ${healthSeconds.toFixed(1)} s after the first push`,
      );
    const verdicts = memoryVerdicts(processes);
    printTable(
      `Resident memory (MiB) per process at shares of its volume (API: pushes accepted; workers: pushes processed), and at the end${withHealth ? ' (health stage done)' : ''}; flat when every later point ≤ ${flatFactor} × the RSS at 10 % (target: flat)`,
      verdicts.map((v) => ({
        process: v.process,
        ...Object.fromEntries(
          [...memoryCheckpoints.map((c) => `${c * 100} %`), 'end'].map((point, i) => [point, v.rssMiB[i] ?? '']),
        ),
        peak: v.peakMiB,
        verdict: v.verdict,
      })),
    );
    const heaps = await Promise.all(processes.map(async (p) => ({ process: p.name, heap: await Promise.all(p.heap) })));
    printTable(
      'V8 heap (MiB) at the same points, used / total: RSS that follows the total while the used part keeps no trend is V8 sizing its heap',
      heaps.map(({ process, heap }) => ({
        process,
        ...Object.fromEntries(
          [...memoryCheckpoints.map((c) => `${c * 100} %`), 'end'].map((point, i) => {
            const at = heap[i];
            return [point, at ? `${at.usedMiB} / ${at.totalMiB}` : ''];
          }),
        ),
      })),
    );
    return {
      processes: {
        apis: apiCount,
        workers: workerCount,
        healthWorker: withHealth,
        workerHeapMiB: workerHeapMiB || null,
        ingestJobsPerWorker: perWorker,
        lostOrDoubled: allReadings !== counted,
      },
      healthSeconds,
      readings: stored,
      pushes: batches.length,
      e2eReadingsPerSecond: e2eRate,
      copyReadingsPerSecond: copyRate,
      ratio,
      latencyMs: {
        atHalfRate: { p50: percentile(unloaded.latencies, 50), p99: percentile(unloaded.latencies, 99) },
        saturated: { p50: percentile(saturated.latencies, 50), p99: percentile(saturated.latencies, 99) },
      },
      memory: { checkpoints: [...memoryCheckpoints, 'end'], flatFactor, byProcess: verdicts, heaps },
      target: ratio >= ratioTarget ? 'met' : 'missed',
    };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await queues.close();
    await redis.quit();
    await pool.end();
  }
}
