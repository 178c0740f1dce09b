/**
 * BRIN or btree on `readings.recorded_at` (issue 12), measured on a fresh database: a year of
 * readings for a fleet slice (default 2,000 vehicles × 4 signals every 6 hours, 11.7M rows)
 * generated in SQL into two copies of `readings` with the same monthly partitions and primary key,
 * one with the migration's BRIN on `recorded_at` (0001_core.sql) and one with a btree instead.
 * Measures each copy's index sizes, the COPY rate of fresh batches (the ingest cost, alternated
 * between the copies) and the times of the reads over raw readings: a vehicle's signals over the
 * year (the monitoring dry-run and history windows), a vehicle's 10-minute window (the incident
 * location lookup), and fleet-wide time ranges (operator queries, rollup backfills). Retention
 * drops whole partitions, so it does not depend on the index.
 * Options: `--vehicles N` (default 2,000), `--interval-minutes M` (default 360).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import type { Pool } from '../src/db/pool.js';
import { freshDatabase, mirrorReadings, printTable } from './support.js';

const signals = ['odometer_km', 'fuel_percent', 'battery_voltage', 'coolant_temp_c'];
const copies = [
  { table: 'readings_brin', timeIndex: 'USING brin (recorded_at)' },
  { table: 'readings_btree', timeIndex: '(recorded_at)' },
] as const;
/** Fresh batches COPYed into each copy, alternating, and the readings (4 signals each) in one batch. */
const copyRounds = 5;
const batchTimestampsPerVehicle = 12;
/** Each query runs this many times per copy (different parameters, copies alternated); the median is reported. */
const queryRepeats = 9;

function option(args: string[], name: string, fallback: number): number {
  const flag = args.indexOf(name);
  return flag >= 0 ? Number(args[flag + 1]) : fallback;
}

function seconds(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e9;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The bench's vehicle ids: a uuid per number, the same in SQL and here. */
const vehicleIdSql = (n: string) => `md5('bench-vehicle-' || ${n})::uuid`;
function vehicleId(n: number): string {
  const hex = createHash('md5').update(`bench-vehicle-${n}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A year of samples ending at `end` into `table`, in time order as providers deliver them (every
 * vehicle at each tick, a second apart): one numbered series, so the insert order is the series'.
 */
async function loadYear(pool: Pool, table: string, vehicles: number, intervalMinutes: number, end: Date) {
  const ticks = Math.floor((365 * 24 * 60) / intervalMinutes);
  const started = process.hrtime.bigint();
  const result = await pool.query(
    `INSERT INTO ${table} (vehicle_id, signal, recorded_at, value_num, source, received_at)
     SELECT ${vehicleIdSql('v')}, ($4::text[])[n % $5 + 1], at, v + extract(epoch FROM at) / 86400, 'samsara', at
     FROM (
       SELECT n, (n / $5) % $3 + 1 AS v,
              $1::timestamptz - interval '365 days' + (n / ($5 * $3)) * $2 * interval '1 minute' + ((n / $5) % $3 + 1) * interval '1 second' AS at
       FROM generate_series(0, $6::bigint - 1) AS n
     ) AS series`,
    [end, intervalMinutes, vehicles, signals, signals.length, ticks * vehicles * signals.length],
  );
  return { rows: result.rowCount ?? 0, seconds: seconds(started) };
}

async function buildIndexes(pool: Pool, table: string, timeIndex: string) {
  const started = process.hrtime.bigint();
  await pool.query(`ALTER TABLE ${table} ADD PRIMARY KEY (vehicle_id, signal, recorded_at)`);
  await pool.query(`CREATE INDEX ${table}_recorded ON ${table} ${timeIndex}`);
  await pool.query(`VACUUM (ANALYZE) ${table}`);
  return seconds(started);
}

/** Bytes of a partitioned relation (table or index) over all its partitions. */
async function partitionedBytes(pool: Pool, relation: string): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `SELECT sum(pg_relation_size(relid))::bigint AS bytes FROM pg_partition_tree($1::regclass)`,
    [relation],
  );
  return Number(rows[0]!.bytes);
}

/** COPY of one batch of fresh samples (every vehicle, `batchTimestampsPerVehicle` instants from `from`); rows/s. */
async function copyBatch(pool: Pool, table: string, vehicleIds: string[], from: Date): Promise<number> {
  const lines: string[] = [];
  for (let i = 0; i < batchTimestampsPerVehicle; i++) {
    const at = new Date(from.getTime() + i * 60_000).toISOString();
    for (const [v, id] of vehicleIds.entries())
      for (const signal of signals) lines.push(`${id}\t${signal}\t${at}\t${v + i / 10}\tsamsara\t${at}`);
  }
  const client = await pool.connect();
  try {
    const started = process.hrtime.bigint();
    await pipeline(
      Readable.from([`${lines.join('\n')}\n`]),
      client.query(
        copyStreams.from(`COPY ${table} (vehicle_id, signal, recorded_at, value_num, source, received_at) FROM STDIN`),
      ),
    );
    return lines.length / seconds(started);
  } finally {
    client.release();
  }
}

/** The indexes (or sequential scans) a statement's plan reads, e.g. "Bitmap Index Scan readings_brin_2026_03_recorded_idx". */
async function planAccess(pool: Pool, text: string, values: unknown[]): Promise<string> {
  const { rows } = await pool.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
  const found = new Set<string>();
  const walk = (node: Record<string, unknown>) => {
    const type = String(node['Node Type']);
    if (type.includes('Scan') && type !== 'Function Scan' && type !== 'Subquery Scan')
      found.add(
        node['Index Name']
          ? `${type.replace(' Scan', '')} on ${String(node['Index Name']).includes('pkey') ? 'primary key' : 'recorded_at index'}`
          : type,
      );
    for (const child of (node['Plans'] as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((rows[0]!['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
  return [...found].join(', ');
}

interface Read {
  name: string;
  /** The statement, with `$table` for the copy. */
  text: string;
  /** Parameters of the i-th repetition. */
  values: (i: number) => unknown[];
}

function reads(vehicles: number, intervalMinutes: number, end: Date): Read[] {
  const yearStart = new Date(end.getTime() - 365 * 86_400_000);
  // The i-th repetition's vehicle number, spread over the fleet.
  const vehicle = (i: number) => ((i * 211 + 17) % vehicles) + 1;
  // An instant of the i-th repetition's sample tick, spread over the year.
  const tick = (i: number) => {
    const ticks = Math.floor((365 * 24 * 60) / intervalMinutes);
    return new Date(
      yearStart.getTime() + Math.floor(((i + 1) * ticks) / (queryRepeats + 2)) * intervalMinutes * 60_000,
    );
  };
  return [
    {
      name: "a vehicle's 4 signals over the year (dry-run / history window)",
      text: `SELECT signal, recorded_at, value_num FROM $table WHERE vehicle_id = $1 AND signal = ANY ($2::text[]) AND recorded_at >= $3 AND recorded_at <= $4 ORDER BY recorded_at, signal`,
      values: (i) => [vehicleId(vehicle(i)), signals, yearStart, end],
    },
    {
      name: "a vehicle's signal within ±10 minutes (incident lookup)",
      text: `SELECT value_num FROM $table WHERE vehicle_id = $1 AND signal = 'odometer_km' AND recorded_at BETWEEN $2::timestamptz - interval '10 minutes' AND $2::timestamptz + interval '10 minutes' ORDER BY recorded_at LIMIT 1`,
      // The vehicle's own sample instant (ticks are offset by the vehicle number in seconds).
      values: (i) => [vehicleId(vehicle(i)), new Date(tick(i).getTime() + vehicle(i) * 1000)],
    },
    // Bounds computed by the caller, as the product's queries pass them (plan-time partition pruning).
    ...(
      [
        ['1 hour', 1],
        ['1 day', 24],
        ['7 days', 168],
      ] as const
    ).map(([span, hours]) => ({
      name: `fleet-wide ${span} (count, average)`,
      text: `SELECT count(*), avg(value_num) FROM $table WHERE recorded_at >= $1 AND recorded_at < $2`,
      values: (i: number) => [tick(i), new Date(tick(i).getTime() + hours * 3_600_000)],
    })),
  ];
}

export async function benchStorage(args: string[]): Promise<Record<string, unknown>> {
  const vehicles = option(args, '--vehicles', 2_000);
  const intervalMinutes = option(args, '--interval-minutes', 360);
  const { pool } = await freshDatabase('storage');
  try {
    // A year back and the current month: the partitions the maintenance queue keeps.
    await pool.query(
      `SELECT ensure_readings_partitions((date_trunc('month', now()) - interval '12 months')::date, 13)`,
    );
    const end = new Date();
    for (const { table } of copies) await mirrorReadings(pool, table, 'INCLUDING DEFAULTS');
    console.log(
      `loading a year of ${vehicles.toLocaleString()} vehicles × ${signals.length} signals every ${intervalMinutes} min into both copies…`,
    );
    const loads = await Promise.all(copies.map((c) => loadYear(pool, c.table, vehicles, intervalMinutes, end)));
    console.log(`building each copy's primary key and recorded_at index, then VACUUM (ANALYZE)…`);
    const builds = await Promise.all(copies.map((c) => buildIndexes(pool, c.table, c.timeIndex)));

    const sizes = await Promise.all(
      copies.map(async ({ table }) => ({
        table: await partitionedBytes(pool, table),
        primaryKey: await partitionedBytes(pool, `${table}_pkey`),
        timeIndex: await partitionedBytes(pool, `${table}_recorded`),
      })),
    );

    // Ingest cost: batches of fresh samples after the year, COPYed into each copy in turn.
    const vehicleIds = Array.from({ length: vehicles }, (_, v) => vehicleId(v + 1));
    const copyRates: number[][] = copies.map(() => []);
    for (let round = 0; round < copyRounds; round++) {
      for (const [slot, copy] of (round % 2 === 0 ? copies : [...copies].reverse()).entries()) {
        const from = new Date(end.getTime() + (round * copies.length + slot) * batchTimestampsPerVehicle * 60_000);
        copyRates[copies.indexOf(copy)]!.push(await copyBatch(pool, copy.table, vehicleIds, from));
      }
    }

    // Reads: each repetition alternates the copies, after one warm-up of each.
    const readResults = [];
    for (const read of reads(vehicles, intervalMinutes, end)) {
      const times: number[][] = copies.map(() => []);
      const access: string[] = [];
      for (const { table } of copies) {
        const text = read.text.replaceAll('$table', table);
        access.push(await planAccess(pool, text, read.values(0)));
        await pool.query(text, read.values(0));
      }
      for (let i = 0; i < queryRepeats; i++) {
        for (const copy of i % 2 === 0 ? copies : [...copies].reverse()) {
          const started = process.hrtime.bigint();
          await pool.query(read.text.replaceAll('$table', copy.table), read.values(i));
          times[copies.indexOf(copy)]!.push(seconds(started) * 1000);
        }
      }
      readResults.push({ name: read.name, medianMs: times.map(median), access });
    }

    const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    const rows = loads[0]!.rows;
    printTable(
      `Readings storage, a year of ${vehicles.toLocaleString()} vehicles × ${signals.length} signals every ${intervalMinutes} min (${rows.toLocaleString()} rows per copy, monthly partitions)`,
      copies.map(({ table }, c) => ({
        copy: table,
        'table MiB': mib(sizes[c]!.table),
        'primary key MiB': mib(sizes[c]!.primaryKey),
        'recorded_at index MiB': mib(sizes[c]!.timeIndex),
        'load s (both at once)': loads[c]!.seconds.toFixed(1),
        'index build + vacuum s': builds[c]!.toFixed(1),
        [`COPY rows/s (median of ${copyRounds})`]: Math.round(median(copyRates[c]!)),
      })),
    );
    printTable(
      `Reads, median of ${queryRepeats} (different vehicles and instants, copies alternated, warm cache)`,
      readResults.map((r) => ({
        read: r.name,
        'BRIN copy ms': r.medianMs[0]!.toFixed(2),
        'btree copy ms': r.medianMs[1]!.toFixed(2),
        'btree / BRIN': (r.medianMs[1]! / r.medianMs[0]!).toFixed(2),
        'plan (BRIN copy)': r.access[0]!,
        'plan (btree copy)': r.access[1]!,
      })),
    );
    const sizeRatio = sizes[1]!.timeIndex / sizes[0]!.timeIndex;
    const copyRatio = median(copyRates[1]!) / median(copyRates[0]!);
    const perVehicle = readResults.slice(0, 2);
    const fleetWide = readResults.slice(2);
    console.log(
      `conclusions: the btree on recorded_at is ${sizeRatio.toFixed(0)}× the BRIN (${mib(sizes[1]!.timeIndex)} against ${mib(sizes[0]!.timeIndex)} MiB for the year); ` +
        `COPY into the btree copy runs at ${copyRatio.toFixed(2)} of the BRIN copy's rate; ` +
        `per-vehicle reads ${perVehicle.every((r) => r.access[0] === r.access[1]) ? 'take the same plan in both copies (the primary key): the time index does not serve them' : 'take different plans (table above)'}; ` +
        `fleet-wide ranges take ${fleetWide.map((r) => (r.medianMs[1]! / r.medianMs[0]!).toFixed(2)).join(', ')} of the BRIN copy's time with the btree.`,
    );
    return {
      vehicles,
      intervalMinutes,
      rowsPerCopy: rows,
      copies: copies.map(({ table }, c) => ({
        table,
        bytes: sizes[c],
        loadSeconds: loads[c]!.seconds,
        indexBuildAndVacuumSeconds: builds[c],
        copyRowsPerSecond: copyRates[c]!.map(Math.round),
      })),
      reads: readResults,
      timeIndexSizeRatio: sizeRatio,
      copyRateRatio: copyRatio,
    };
  } finally {
    await pool.end();
  }
}
