/**
 * Real service processes for fault tests: `node dist/server/main.js api|worker <queue...>` over a
 * test app's database and Redis (`npm test` builds dist/ before vitest runs), and a redis-server
 * of the test's own that it may flush, kill and replace (never the shared one). A ProcessGroup remembers every process it started, so one
 * `killAll()` in afterAll ends them all, whatever the test did before failing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { projectRoot } from '../../src/paths.js';
import { adminToken, testSecretsKey, type TestApp } from './app.js';

/** A port nothing listens on right now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface ServiceProcess {
  readonly port: number;
  readonly pid: number;
  /** http://127.0.0.1:<port>: the API, or a worker's /healthz, /readyz and /metrics. */
  readonly url: string;
  /** kill -9, resolved once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful shutdown), resolved with the exit code once the process is gone. */
  stop(): Promise<number | null>;
  /** GET /readyz: its status and JSON body. */
  readyz(): Promise<{ status: number; body: any }>;
  /** GET /metrics as Prometheus text. */
  metrics(): Promise<string>;
}

export interface RedisServer {
  readonly url: string;
  /** A client on this server, for FLUSHDB and inspection; closed by killAll(). */
  readonly client: Redis;
  /** kill -9 of the server, as a crashed primary. */
  kill(): Promise<void>;
  /** An empty server on the same port again, as a failover to an empty replica. */
  restart(): Promise<void>;
}

/** The built entry point (`npm run build`). */
const serviceEntry = 'dist/server/main.js';
/** Of a child's stderr, the end is kept: why it failed to start. */
const stderrKeptChars = 4000;
/** Starting takes a few seconds, up to a minute when the machine is loaded. */
const startTimeoutMs = 60_000;

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function waitUntil(what: string, child: ChildProcess, probe: () => Promise<boolean>, stderr: () => string) {
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready: ${stderr()}`);
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} was not ready within ${startTimeoutMs / 1000} s: ${stderr()}`);
}

async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** The environment of a service process over the test app's database, Redis and key prefix. */
export function serviceEnv(t: TestApp, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: t.config.databaseUrl,
    REDIS_URL: t.config.redisUrl,
    REDIS_PREFIX: t.config.redisPrefix,
    SECRETS_KEY: testSecretsKey,
    ADMIN_TOKEN: adminToken,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    // The process a test kills or stops is the worker itself, not a launcher that starts it under
    // a heap cap (server/heap-cap.ts), unless the test asks for one.
    WORKER_HEAP_MIB: '0',
    ...overrides,
  };
}

export class ProcessGroup {
  private readonly children: ChildProcess[] = [];
  private readonly clients: Redis[] = [];

  private spawn(command: string, args: string[], env: Record<string, string>) {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-stderrKeptChars);
    });
    // A command that cannot start (not on PATH) is reported by waitUntil, not thrown here.
    child.on('error', (error) => {
      stderr += error.message;
    });
    return { child, stderr: () => stderr };
  }

  /**
   * Starts `node dist/server/main.js <args>` (e.g. ['api'] or ['worker', 'ingest', 'health']) and
   * waits until its HTTP server answers /healthz: for a worker that is after its workers started.
   */
  async start(args: string[], env: Record<string, string>, port?: number): Promise<ServiceProcess> {
    const listenPort = port ?? (await freePort());
    const { child, stderr } = this.spawn(process.execPath, [join(projectRoot, serviceEntry), ...args], {
      ...env,
      PORT: String(listenPort),
    });
    const url = `http://127.0.0.1:${listenPort}`;
    await waitUntil(
      `node ${serviceEntry} ${args.join(' ')}`,
      child,
      () =>
        fetch(`${url}/healthz`).then(
          (response) => response.ok,
          () => false,
        ),
      stderr,
    );
    return {
      port: listenPort,
      pid: child.pid!,
      url,
      kill: async () => {
        child.kill('SIGKILL');
        await exited(child);
      },
      stop: async () => {
        child.kill('SIGTERM');
        await exited(child);
        return child.exitCode;
      },
      readyz: async () => {
        const response = await fetch(`${url}/readyz`);
        return { status: response.status, body: await response.json() };
      },
      metrics: async () => (await fetch(`${url}/metrics`)).text(),
    };
  }

  /** A redis-server of this test's own on a free port, without persistence, so losing its data is real. */
  async startRedis(): Promise<RedisServer> {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let server: ChildProcess | undefined;
    const start = async () => {
      const { child, stderr } = this.spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {},
      );
      server = child;
      await waitUntil(`redis-server on port ${port}`, child, () => redisAnswers(url), stderr);
    };
    await start();
    const client = new Redis(url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    this.clients.push(client);
    return {
      url,
      client,
      kill: async () => {
        if (!server) return;
        server.kill('SIGKILL');
        await exited(server);
      },
      restart: start,
    };
  }

  /** kill -9 of every process still running, then waits for them to be gone. */
  async killAll(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    for (const child of this.children) child.kill('SIGKILL');
    await Promise.all(this.children.map(exited));
  }
}
