/**
 * Where the ingest job's time goes, per sample: the inbox is filled with the ingest bench's
 * pushes first, then the real job (`ingestInboxBatch`) drains it, once with one job at a time
 * and once with four at once (the worker's concurrency). Prints, per sample, the CPU time of the
 * Node process and of its Postgres backends (/proc: unlike wall time, it barely moves when other
 * processes share the cores) and, for the sequential pass, the wall time of each statement.
 */
import { Writable } from 'node:stream';
import { adapters } from '../providers/index.js';
import { insertInboxRow } from '../src/db/inbox.js';
import { createPool, type Pool, type PoolClient } from '../src/db/pool.js';
import { ingestInboxBatch } from '../src/ingest/isolation.js';
import { batchRows } from '../src/ingest/process-inbox.js';
import { benchFleet, generateBatches, seed } from './ingest.js';
import { benchLog, freshDatabase, printTable, startCpuMeter } from './support.js';

/** The statements that write a vehicle's state (latest samples and read model) once it is locked. */
const stateWrites = ['apply-latest-state-patches'];
/** The worker's CPU per sample four jobs at once before issue 20 (docs/performance.md, 2026-11-24, quiet machine). */
const workerCpuBeforeUs = 8.0;

type StatementTimes = Map<string, { calls: number; ms: number; rows: number }>;

/** Times every statement of the client by its prepared name (or its first words), and counts the rows it wrote or returned. */
function timeStatements(client: PoolClient, times: StatementTimes): void {
  const query = client.query.bind(client) as (
    config: unknown,
    values?: unknown,
  ) => Promise<{ rowCount?: number | null }>;
  const record = (name: string, started: bigint, rows = 0) => {
    const entry = times.get(name) ?? { calls: 0, ms: 0, rows: 0 };
    entry.calls++;
    entry.ms += Number(process.hrtime.bigint() - started) / 1e6;
    entry.rows += rows;
    times.set(name, entry);
  };
  const timed = (config: unknown, values?: unknown) => {
    const name =
      typeof config === 'string' ? config.slice(0, 30) : ((config as { name?: string }).name ?? 'unnamed statement');
    const started = process.hrtime.bigint();
    // A COPY stream (pg-copy-streams) is handed back as is: the caller writes into it. It settles
    // on 'finish' or, when the COPY fails, on 'error'.
    if (config instanceof Writable) {
      const stream = query(config) as unknown as Writable;
      let settled = false;
      const settle = () => {
        if (!settled) record('COPY readings', started);
        settled = true;
      };
      stream.once('finish', settle);
      stream.on('error', settle);
      return stream;
    }
    return query(config, values).then(
      (result) => {
        record(name, started, result.rowCount ?? 0);
        return result;
      },
      (error: unknown) => {
        record(name, started);
        throw error;
      },
    );
  };
  client.query = timed as typeof client.query;
}

async function drain(
  url: string,
  admin: Pool,
  concurrency: number,
): Promise<{ samples: number; wallUs: number; nodeUs: number; postgresUs: number; times: StatementTimes }> {
  const times: StatementTimes = new Map();
  const pool = createPool(url, concurrency, benchLog);
  pool.on('connect', (client) => timeStatements(client, times));
  // The connections exist before the clock starts, so their backends are counted from the start.
  const clients = await Promise.all(Array.from({ length: concurrency }, () => pool.connect()));
  for (const client of clients) client.release();
  times.clear();
  const meter = await startCpuMeter(admin, {});
  const started = process.hrtime.bigint();
  let samples = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const outcome = await ingestInboxBatch(pool, adapters);
        samples += outcome.rows.reduce((sum, row) => sum + row.samples, 0);
        if (outcome.claimed === 0) return;
      }
    }),
  );
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const cpu = await meter();
  await pool.end();
  const perSampleUs = (seconds: number) => (seconds * 1e6) / samples;
  return {
    samples,
    wallUs: (wallMs * 1000) / samples,
    nodeUs: perSampleUs(cpu.bench),
    postgresUs: perSampleUs(cpu.postgres),
    times,
  };
}

export async function benchIngestProfile(args: string[]): Promise<Record<string, unknown>> {
  const flag = args.indexOf('--readings');
  const target = flag >= 0 ? Number(args[flag + 1]) : 300_000;
  const passes: Array<Awaited<ReturnType<typeof drain>> & { concurrency: number }> = [];
  for (const concurrency of [1, 4]) {
    const { url, pool } = await freshDatabase('ingest_profile');
    try {
      const { connectionId, vehicleIds } = await seed(pool, 'bench-simulator-secret');
      for (const batch of generateBatches(benchFleet(), target, vehicleIds)) {
        const row = { connectionId, provider: 'simulator', contentType: 'application/json', cascade: true };
        await insertInboxRow(pool, { ...row, payload: batch.body, refreshId: null });
      }
      passes.push({ concurrency, ...(await drain(url, pool, concurrency)) });
    } finally {
      await pool.end();
    }
  }
  printTable(
    `Ingest job profile, ${passes[0]!.samples.toLocaleString()} samples, up to ${batchRows} inbox rows per job (µs per sample)`,
    passes.map((p) => ({
      'concurrent jobs': p.concurrency,
      wall: p.wallUs.toFixed(2),
      'node cpu': p.nodeUs.toFixed(2),
      'postgres cpu': p.postgresUs.toFixed(2),
    })),
  );
  const sequential = passes[0]!;
  const statements = [...sequential.times]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([statement, { calls, ms }]) => ({
      statement,
      calls,
      'µs/sample': ((ms * 1000) / sequential.samples).toFixed(2),
      'ms/call': (ms / calls).toFixed(1),
    }));
  printTable('Statements of the sequential pass (wall time, Postgres and the round trip)', statements);

  // Issue 20's targets for the ingest job, each beside its figure.
  const rows = (name: string) => sequential.times.get(name)?.rows ?? 0;
  const rollupShare =
    (sequential.times.get('upsert-reading-rollups')?.ms ?? 0) / 1000 / ((sequential.wallUs * sequential.samples) / 1e6);
  const stateWritesPerVehicle =
    stateWrites.reduce((sum, name) => sum + rows(name), 0) / rows('lock-vehicles-for-state');
  const workerCpuUs = passes[1]!.nodeUs;
  const targets = [
    {
      figure: 'history rollups, share of the job (sequential wall)',
      value: `${(rollupShare * 100).toFixed(1)} %`,
      target: '< 10 %',
      verdict: rollupShare < 0.1 ? 'met' : 'missed',
    },
    {
      figure: 'vehicle state rows written per vehicle and batch',
      value: stateWritesPerVehicle.toFixed(2),
      target: '1',
      // None at all would mean the statement's name changed, not a target met.
      verdict: stateWritesPerVehicle > 0 && stateWritesPerVehicle <= 1 ? 'met' : 'missed',
    },
    {
      figure: `worker CPU per sample, ${passes[1]!.concurrency} jobs at once`,
      value: `${workerCpuUs.toFixed(2)} µs`,
      target: `≤ ${(workerCpuBeforeUs / 2).toFixed(1)} µs (half of ${workerCpuBeforeUs} on 2026-11-24)`,
      verdict: workerCpuUs <= workerCpuBeforeUs / 2 ? 'met' : 'missed',
    },
  ];
  printTable(
    "Targets (issue 20); CPU figures rise with the machine's load, so compare runs taken in the same minutes",
    targets,
  );
  return {
    targets,
    batchRows,
    passes: passes.map(({ times, ...figures }) => ({ ...figures, statements: Object.fromEntries(times) })),
  };
}
