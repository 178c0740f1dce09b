/**
 * A streaming replica of the test cluster on loopback, made with the machine's own Postgres
 * binaries: `pg_basebackup -R` into a temporary directory, then `pg_ctl start` on a free port.
 * Postgres refuses to run as root, so as root the steps run as the `postgres` user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export type ReplicaSupport = { ok: true; bin: string } | { ok: false; reason: string };

/** Settings a hot standby must hold at least as high as its primary, or it refuses to start. */
const standbyMinimums = [
  'max_connections',
  'max_worker_processes',
  'max_wal_senders',
  'max_prepared_transactions',
  'max_locks_per_transaction',
];

/** One statement on its own connection; `replication` opens a physical replication connection. */
async function query(
  url: string,
  sql: string,
  { params = [], replication = false }: { params?: unknown[]; replication?: boolean } = {},
): Promise<pg.QueryResult> {
  // node-postgres passes `replication` on in the startup packet; its types do not list it.
  const config = {
    connectionString: url,
    connectionTimeoutMillis: 5000,
    ...(replication ? { replication: 'true' } : {}),
  };
  const client = new pg.Client(config as pg.ClientConfig);
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Whether this machine can start a replica of the cluster at `primaryUrl`, and if not, why. */
export async function replicaSupport(primaryUrl: string): Promise<ReplicaSupport> {
  const primary = new URL(primaryUrl);
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(primary.hostname)) {
    return { ok: false, reason: `the test Postgres (${primary.host}) is not on this machine` };
  }
  let major: number;
  let walLevel: string;
  let senders: number;
  try {
    const { rows } = await query(
      primaryUrl,
      `SELECT current_setting('server_version_num')::int / 10000 AS major,
              current_setting('wal_level') AS wal_level, current_setting('max_wal_senders')::int AS senders`,
    );
    ({ major, wal_level: walLevel, senders } = rows[0]);
  } catch (error) {
    return { ok: false, reason: `the test Postgres did not answer (${(error as Error).message})` };
  }
  const bin = `/usr/lib/postgresql/${major}/bin`;
  const missing = ['pg_basebackup', 'pg_ctl', 'postgres'].filter((tool) => !existsSync(join(bin, tool)));
  if (missing.length > 0) return { ok: false, reason: `${missing.join(', ')} not found in ${bin}` };
  if (walLevel === 'minimal' || senders < 2) {
    return {
      ok: false,
      reason: `the cluster has wal_level=${walLevel}, max_wal_senders=${senders} (replica and ≥ 2 needed)`,
    };
  }
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) {
    return { ok: false, reason: 'running as root without runuser, and Postgres refuses to run as root' };
  }
  try {
    // What pg_basebackup needs first: a physical replication connection (pg_hba's "replication" lines).
    await query(primaryUrl, 'IDENTIFY_SYSTEM', { replication: true });
  } catch (error) {
    return {
      ok: false,
      reason:
        `the cluster refuses replication connections (${(error as Error).message}); ` +
        'add "host replication all 127.0.0.1/32 trust" to its pg_hba.conf and reload (.ci/run does)',
    };
  }
  return { ok: true, bin };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface StreamingReplica {
  port: number;
  /** The replica's URL for a database of the primary (its URL with the replica's port). */
  url(databaseUrl: string): string;
  /** Runs SQL on the replica's `postgres` database (pause or resume replay). */
  query(sql: string): Promise<pg.QueryResult>;
  /** Waits until the replica has replayed everything the primary has flushed now. */
  caughtUp(primaryUrl: string, timeoutMs?: number): Promise<void>;
  /** `pg_ctl stop` with the given mode: fast ends sessions cleanly, immediate is a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops it if running and deletes its directory. */
  remove(): Promise<void>;
}

export async function startReplica(primaryUrl: string, bin: string): Promise<StreamingReplica> {
  const asRoot = process.getuid?.() === 0;
  const runuser = existsSync('/usr/sbin/runuser') ? '/usr/sbin/runuser' : '/sbin/runuser';
  const tool = (name: string, args: string[]) =>
    asRoot ? run(runuser, ['-u', 'postgres', '--', join(bin, name), ...args]) : run(join(bin, name), args);
  const owner = asRoot
    ? { uid: Number(execFileSync('id', ['-u', 'postgres'])), gid: Number(execFileSync('id', ['-g', 'postgres'])) }
    : null;

  const dir = mkdtempSync(join(tmpdir(), 'fleet-replica-'));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const primary = new URL(primaryUrl);
  const port = await freePort();
  let running = false;
  const stopNow = () => {
    if (!running) return;
    running = false;
    const args = ['-D', data, '-m', 'immediate', '-w', 'stop'];
    try {
      execFileSync(
        asRoot ? runuser : join(bin, 'pg_ctl'),
        asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args] : args,
        {
          stdio: 'ignore',
        },
      );
    } catch {
      // Already gone.
    }
  };
  // A test process that dies must not leave a Postgres running.
  process.once('exit', stopNow);
  try {
    const { rows } = await query(primaryUrl, 'SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])', {
      params: [standbyMinimums],
    });
    const backup = () =>
      tool('pg_basebackup', [
        '-h',
        primary.hostname,
        '-p',
        primary.port || '5432',
        '-U',
        decodeURIComponent(primary.username || 'postgres'),
        '-D',
        data,
        '-R',
        '-X',
        'stream',
        '-c',
        'fast',
      ]);
    // On a cluster shared with other test runs the backup's WAL stream has been cut once by the
    // checkpointer ("terminating process … to release replication slot"); a second copy is cheap.
    for (let attempt = 1; ; attempt++) {
      try {
        await backup();
        break;
      } catch (error) {
        if (attempt === 3) throw error;
        console.warn(`pg_basebackup failed, trying again: ${(error as Error).message.trim()}`);
        rmSync(data, { recursive: true, force: true });
      }
    }
    // The Debian layout keeps postgresql.conf and pg_hba.conf outside the data directory, so the
    // copy has none: the replica gets its own.
    const conf = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${port}`,
      `unix_socket_directories = '${dir}'`,
      'hot_standby = on',
      ...rows.map((row: { name: string; setting: string }) => `${row.name} = ${row.setting}`),
    ];
    writeFileSync(join(data, 'postgresql.conf'), `${conf.join('\n')}\n`);
    writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
    if (owner) {
      for (const file of ['postgresql.conf', 'pg_hba.conf']) chownSync(join(data, file), owner.uid, owner.gid);
    }
    await tool('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '120', 'start']);
    running = true;
  } catch (error) {
    stopNow();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const url = (databaseUrl: string) => {
    const replica = new URL(databaseUrl);
    replica.port = String(port);
    return replica.toString();
  };
  const replica: StreamingReplica = {
    port,
    url,
    query: (sql) => query(url(primaryUrl), sql),
    caughtUp: async (primaryUrlNow, timeoutMs = 30_000) => {
      const { rows } = await query(primaryUrlNow, 'SELECT pg_current_wal_flush_lsn()::text AS lsn');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { rows: replayed } = await query(
          url(primaryUrl),
          'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
          {
            params: [rows[0].lsn],
          },
        );
        if (replayed[0].done) return;
        if (Date.now() > deadline)
          throw new Error(`replica did not replay up to ${rows[0].lsn} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop: async (mode = 'fast') => {
      await tool('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      running = false;
    },
    remove: async () => {
      stopNow();
      process.removeListener('exit', stopNow);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return replica;
}
