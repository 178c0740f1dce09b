/** Shared bench plumbing: a fresh database, child service processes, autocannon runs, reporting. */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { ensureDatabase, migrate } from '../src/db/migrate.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { ensureReadingPartitions } from '../src/db/readings.js';
import { createLogger } from '../src/log.js';
import { projectRoot } from '../src/paths.js';
import { generateApiKey } from '../src/security/api-keys.js';

export const benchConfig = loadConfig();
export const benchLog = createLogger('warn', 'bench');

/** A fresh, migrated database named after the bench, on the configured server. */
export async function freshDatabase(name: string): Promise<{ url: string; pool: Pool }> {
  const url = new URL(benchConfig.databaseUrl);
  url.pathname = `/fleet_bench_${name}`;
  const admin = new URL(benchConfig.databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(`fleet_bench_${name}`)} WITH (FORCE)`);
  await client.end();
  await ensureDatabase(url.toString());
  const pool = createPool(url.toString(), 4, benchLog);
  await migrate(pool, benchLog);
  await ensureReadingPartitions(pool, new Date());
  return { url: url.toString(), pool };
}

/** A company and an API key for it, written directly; returns the key (shown once, as the API would). */
export async function createBenchCompany(pool: Pool, name: string): Promise<{ companyId: string; key: string }> {
  const company = await pool.query<{ id: string }>(`INSERT INTO companies (name) VALUES ($1) RETURNING id`, [name]);
  const companyId = company.rows[0]!.id;
  return { companyId, key: await createBenchApiKey(pool, companyId) };
}

/** An API key of an existing company, written directly; returns the key. */
export async function createBenchApiKey(pool: Pool, companyId: string): Promise<string> {
  const key = generateApiKey();
  await pool.query(`INSERT INTO api_keys (company_id, key_prefix, key_hash) VALUES ($1, $2, $3)`, [
    companyId,
    key.prefix,
    key.hash,
  ]);
  return key.key;
}

/** The environment of a service process the bench starts against its own database and queue prefix. */
export function serviceEnv(databaseUrl: string, redisPrefix: string, extra: Record<string, string> = {}) {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: redisPrefix,
    SECRETS_KEY: benchConfig.secretsKey.toString('hex'),
    ADMIN_TOKEN: '',
    // Benches read the memory of the pid they started: the worker itself, not a launcher that
    // starts it under a cap (server/heap-cap.ts). A bench caps a worker with NODE_OPTIONS.
    WORKER_HEAP_MIB: '0',
    ...extra,
  };
}

export interface Service {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Every service process started and not yet exited, ready or still starting. */
const running = new Set<ChildProcess>();

/**
 * SIGTERM to every service process still running, resolved once all have exited: what a bench
 * stopped by a signal runs, so that none outlives it, not even one that was still starting.
 */
export async function stopAllServices(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** Starts `node <script> <args>` with extra env and waits until `readyPath` answers 200. */
export async function startService(
  script: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  readyPath: string,
  /** Written to the process's stdin, then closed: secrets stay off its command line (visible in ps). */
  input?: string,
): Promise<Service> {
  const url = `http://127.0.0.1:${port}`;
  if (
    await fetch(url).then(
      () => true,
      () => false,
    )
  )
    throw new Error(`port ${port} is already in use: stop what listens there first`);
  // BENCH_CPU_PROF=<dir>: every service writes a V8 CPU profile there when it stops (docs/performance.md).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, join(projectRoot, 'dist', script), ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'inherit', 'inherit'],
  });
  child.stdin?.end(input);
  running.add(child);
  child.once('exit', () => running.delete(child));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    const ok = await fetch(`${url}${readyPath}`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      return {
        url,
        process: child,
        stop: () =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`${script} did not become ready on ${url}${readyPath}`);
}

/** `count` processes of `node <script> <args>`, on ports `firstPort`, `firstPort + portStep`, …, started one after the other. */
export async function startServices(
  count: number,
  script: string,
  args: string[],
  env: Record<string, string>,
  firstPort: number,
  portStep = 1,
): Promise<Service[]> {
  const services: Service[] = [];
  for (let i = 0; i < count; i++)
    services.push(await startService(script, args, env, firstPort + i * portStep, '/readyz'));
  return services;
}

/** The sum of a metric's samples in a process's /metrics whose labels include every one of `labels`. */
export async function metricSum(serviceUrl: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  return [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\d+)$`, 'gm'))]
    .filter(([, labelText]) => wanted.every((pair) => labelText!.split(',').includes(pair)))
    .reduce((sum, [, , n]) => sum + Number(n), 0);
}

/** Resident memory of a process in MiB, and its peak so far, from /proc. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kib('VmRSS') / 1024), peakMiB: Math.round(kib('VmHWM') / 1024) };
}

/**
 * A table named `name` partitioned like `readings`, with a partition for each of its months and a
 * default one; `like` is the LIKE clause's options (`INCLUDING ALL` copies its keys and indexes).
 */
export async function mirrorReadings(pool: Pool, name: string, like: string): Promise<void> {
  await pool.query(`CREATE TABLE ${name} (LIKE readings ${like}) PARTITION BY RANGE (recorded_at)`);
  await pool.query(`CREATE TABLE ${name}_default PARTITION OF ${name} DEFAULT`);
  const months = await pool.query<{ month: string }>(
    `SELECT substring(inhrelid::regclass::text FROM 'readings_(\\d{4}_\\d{2})') AS month
     FROM pg_inherits WHERE inhparent = 'readings'::regclass AND inhrelid::regclass::text <> 'readings_default'`,
  );
  for (const { month } of months.rows) {
    const first = `${month.replace('_', '-')}-01`;
    await pool.query(
      `CREATE TABLE ${name}_${month} PARTITION OF ${name} FOR VALUES FROM ('${first}') TO (('${first}'::date + interval '1 month'))`,
    );
  }
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Requests answered over the run. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /**
   * Of the process serving the load (when given): CPU share of one core over the run, CPU per
   * request, and RSS at its end.
   */
  serverCpuPercent?: number;
  serverCpuMicrosPerRequest?: number;
  serverRssMb?: number;
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const ticksPerSecond = 100;

/** CPU seconds used so far and resident memory of a process, from /proc (Linux). */
export function processUsage(pid: number): { cpuSeconds: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  const rssKb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { cpuSeconds, rssMb: Math.round(rssKb / 1024) };
}

/**
 * CPU seconds used from now on by named processes, by this bench process (`bench`), and by the
 * Postgres backends serving the pool's database (`postgres`: the backends alive at the start or
 * at the end, one opened in between counted from zero; one that came and went in between is
 * missed; NaN when Postgres runs on another host, where its pids have no /proc entry).
 */
export async function startCpuMeter<Name extends string>(
  pool: Pool,
  pids: Record<Name, number>,
): Promise<() => Promise<Record<Name | 'bench' | 'postgres', number>>> {
  const named: number[] = Object.values(pids);
  const backendPids = async () =>
    (await pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)).rows
      .map((r) => r.pid)
      .filter((pid) => !named.includes(pid));
  const cpuOf = (pid: number) => {
    try {
      return processUsage(pid).cpuSeconds;
    } catch {
      return null; // the process has exited, or is not on this host
    }
  };
  const startBench = process.cpuUsage();
  const start = new Map<number, number | null>();
  const startBackends = await backendPids();
  for (const pid of [...named, ...startBackends]) start.set(pid, cpuOf(pid));
  return async () => {
    const used = (pid: number) => Math.max(0, (cpuOf(pid) ?? start.get(pid) ?? 0) - (start.get(pid) ?? 0));
    const bench = process.cpuUsage(startBench);
    const backends = [...new Set([...startBackends, ...(await backendPids())])];
    const readable = backends.some((pid) => start.get(pid) != null || cpuOf(pid) !== null);
    return {
      ...(Object.fromEntries(Object.entries<number>(pids).map(([name, pid]) => [name, used(pid)])) as Record<
        Name,
        number
      >),
      bench: (bench.user + bench.system) / 1e6,
      postgres: readable ? backends.reduce((sum, pid) => sum + used(pid), 0) : Number.NaN,
    };
  };
}

/** CPU per item, in µs, by process: what each process spends on one delivery, reading or request. */
export function cpuMicrosPer(cpuSeconds: Record<string, number>, items: number): Record<string, number> {
  return Object.fromEntries(Object.entries(cpuSeconds).map(([name, s]) => [name, Math.round((s * 1e6) / items)]));
}

export async function load(options: autocannon.Options, server?: Service): Promise<LoadResult> {
  const pid = server?.process.pid;
  const before = pid ? processUsage(pid) : null;
  const started = process.hrtime.bigint();
  const result = await autocannon(options);
  const elapsedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = pid ? processUsage(pid) : null;
  return {
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    ...(before && after
      ? {
          serverCpuPercent: Math.round(((after.cpuSeconds - before.cpuSeconds) / elapsedSeconds) * 100),
          serverCpuMicrosPerRequest: Math.round(((after.cpuSeconds - before.cpuSeconds) * 1e6) / result.requests.total),
          serverRssMb: after.rssMb,
        }
      : {}),
  };
}

/** The `p`th percentile of ascending `sorted` (0 for none). */
export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  console.log(`\n${title}\n${line(columns)}\n${line(widths.map((w) => '-'.repeat(w)))}`);
  for (const row of rows) console.log(line(columns.map((c) => String(row[c]))));
}

export function writeResult(name: string, result: unknown): string {
  const dir = join(projectRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2));
  return file;
}

/**
 * A delivery ceiling: `count` signed POSTs to `url` from a plain loop, `inFlight` at a time over
 * keep-alive; `next` builds each body and its signature header. Answers the seconds it took.
 */
export async function signedPostLoop(
  url: string,
  count: number,
  inFlight: number,
  next: () => { body: Buffer; headers: Record<string, string> },
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
  const target = new URL(url);
  const send = () =>
    new Promise<void>((resolve, reject) => {
      const { body, headers } = next();
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 204 ? resolve() : reject(new Error(`receiver answered ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let sent = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (sent < count) {
        sent++;
        await send();
      }
    }),
  );
  agent.destroy();
  return Number(process.hrtime.bigint() - started) / 1e9;
}
