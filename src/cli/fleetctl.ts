/**
 * fleetctl: the operator CLI. Everything but `migrate` goes through the operator API
 * (FLEET_API_URL, ADMIN_TOKEN), so it works against any deployment. Human output by default,
 * `--json` for scripts.
 */
import { parseArgs } from 'node:util';
import { isRecordId } from '../domain/ids.js';
import { loadCliConfig, ConfigError, type CliConfig } from '../config.js';
import { adapters, isProviderId } from '../../providers/index.js';
import { prepareDatabase } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import { replayInbox, type ReplayProgress } from '../ingest/replay.js';
import { createLogger } from '../log.js';
import { generatePassword } from '../security/passwords.js';

const usage = `fleetctl <command> [options]

  migrate                                   create the database if missing and apply migrations
  company create <name> [--external-id connector=id]...
  company list
  key create <company-id> [--name <label>]  prints the key once
  key revoke <key-id>
  vehicle add <company-id> [--name n] [--vin v] [--plate p] [--make m] [--model m] [--year y]
                           [--provider samsara|geotab|motive|smartcar|traccar|generic|simulator]
                           [--provider-vehicle-id id]
  vehicle list <company-id>
  user add --company <id> --email <e> --name <n> [--role admin|developer] [--password <p>]
                                            console user (admin by default); without --password one
                                            is generated and printed once
  user list --company <id>
  user set-role --company <id> (--user <id> | --email <e>) --role admin|developer
                                            change a user's role; refused (409) for the company's
                                            last admin
  user disable <user-id>                    the user cannot sign in; their sessions end
  vehicle transfer <vehicle-id> <company-id> [--at <ISO time>]
                                            move a vehicle to another company (its history stays
                                            with the VIN)
  inbox failed [--provider p] [--connection id] [--company id] [--limit n]
                                            parked inbox rows: payloads that failed on their own
  status [--watch] [--interval <s>] [--count <n>]
                                            queue depths, ingest lag and delivery backlogs; --watch
                                            redraws every --interval seconds (default 2), --count
                                            times (default: until Ctrl-C)
  inbox replay (--since <ISO time> | --parked) [--provider p] [--connection id]
                                            re-normalize stored raw payloads (idempotent); --parked
                                            retries parked rows after a fix

Options: --json (machine-readable output), --help
Environment: FLEET_API_URL (default http://127.0.0.1:$PORT), ADMIN_TOKEN, DATABASE_URL (migrate, replay)`;

class CliError extends Error {}

interface Output {
  json: boolean;
  print(data: unknown, human: () => string): void;
}

async function call(config: CliConfig, method: string, path: string, body?: unknown): Promise<any> {
  if (!config.adminToken)
    throw new CliError('ADMIN_TOKEN is not set: fleetctl needs the operator token of the service');
  let response: Response;
  try {
    response = await fetch(`${config.apiUrl}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${config.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new CliError(
      `cannot reach ${config.apiUrl} (${(error as Error).message}); is the service running? Set FLEET_API_URL.`,
    );
  }
  const payload = (await response.json().catch(() => null)) as {
    data?: unknown;
    error?: { code: string; message: string };
  } | null;
  if (!response.ok) {
    const error = payload?.error;
    throw new CliError(error ? `${error.code}: ${error.message}` : `HTTP ${response.status}`);
  }
  return payload?.data;
}

function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const text = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => text(r[c]))))].join(
    '\n',
  );
}

function shorten(text: string | null, chars: number): string | null {
  return text !== null && text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/** The id of the company's live user with this email (emails are unique among live users). */
async function liveUserIdOf(config: CliConfig, companyId: string, email: string): Promise<string> {
  const users: Array<{ id: string; email: string; disabled_at: string | null }> = await call(
    config,
    'GET',
    `/companies/${companyId}/users`,
  );
  const user = users.find((u) => u.disabled_at === null && u.email.toLowerCase() === email.toLowerCase());
  if (!user) throw new CliError(`the company has no live console user ${email}`);
  return user.id;
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new CliError(`missing ${what}\n\n${usage}`);
  return value;
}

function positiveNumber(text: string, option: string): number {
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value))
    throw new CliError(`${option} must be a positive number (got "${text}")`);
  return value;
}

function renderStatus(status: any): string {
  const queues = table(
    status.queues.map((q: any) => ({ queue: q.name, ...q.counts, paused: q.paused ? 'yes' : '' })),
    ['queue', 'waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed', 'paused'],
  );
  const { ingest, deliveries, reads } = status;
  return [
    `pipeline at ${status.generated_at}`,
    queues,
    `ingest: lag ${ingest.lag_seconds} s, ${ingest.pending_rows} inbox rows pending, ${ingest.parked_rows} parked`,
    `deliveries: ${deliveries.core_open} core open, ${deliveries.monitoring_pending} monitoring pending, ` +
      `${deliveries.monitoring_retrying} retrying`,
    ...renderReads(reads),
  ].join('\n');
}

/** Where the answering API process sends reads, and one line per read replica. */
function renderReads(reads: any): string[] {
  if (reads.replicas.length === 0) return ['reads: all on the primary (no DATABASE_REPLICA_URLS)'];
  return [
    `reads: ${reads.to_replicas} to replicas, ${reads.to_primary} to the primary (this API process, since it started)`,
    ...reads.replicas.map(
      (replica: any) =>
        `replica ${replica.name}: ${replica.state}` +
        (replica.lag_ms === null ? '' : `, lag ${replica.lag_ms} ms`) +
        (replica.replay_lsn === null ? '' : `, replayed to ${replica.replay_lsn}`) +
        (replica.error === null ? '' : ` (${replica.error})`),
    ),
  ];
}

export interface CliIo {
  /** Environment override (tests); the config module reads process.env otherwise. */
  env?: Record<string, string | undefined>;
  stdout(line: string): void;
  stderr(line: string): void;
  /** Redraws a progress line in place (a terminal), or null to print nothing until the end. */
  progress?: ((line: string) => void) | null;
}

function progressBar({ done, total }: ReplayProgress): string {
  const width = 30;
  const share = total === 0 ? 1 : done / total;
  const filled = Math.round(share * width);
  return `replaying inbox [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(share * 100)}% ${done}/${total} rows`;
}

async function main(argv: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      name: { type: 'string' },
      vin: { type: 'string' },
      plate: { type: 'string' },
      make: { type: 'string' },
      model: { type: 'string' },
      year: { type: 'string' },
      provider: { type: 'string' },
      'provider-vehicle-id': { type: 'string' },
      'external-id': { type: 'string', multiple: true },
      since: { type: 'string' },
      parked: { type: 'boolean', default: false },
      connection: { type: 'string' },
      company: { type: 'string' },
      limit: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      user: { type: 'string' },
      at: { type: 'string' },
      watch: { type: 'boolean', default: false },
      interval: { type: 'string' },
      count: { type: 'string' },
    },
  });
  const [group, action, ...rest] = positionals;
  if (values.help || !group) {
    io.stdout(usage);
    return;
  }
  const out: Output = {
    json: values.json,
    print: (data, human) => io.stdout(values.json ? JSON.stringify(data, null, 2) : human()),
  };
  const config = io.env ? loadCliConfig(io.env) : loadCliConfig();
  const command = `${group} ${action ?? ''}`.trim();

  switch (command) {
    case 'migrate': {
      const applied = await prepareDatabase(
        config.databaseUrl,
        createLogger(values.json ? 'silent' : 'info', 'fleetctl'),
      );
      out.print({ applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'));
      return;
    }
    case 'company create': {
      const externalIds = Object.fromEntries(
        (values['external-id'] ?? []).map((pair) => {
          const [connector, id] = pair.split('=');
          if (!connector || !id) throw new CliError(`--external-id takes connector=id (got "${pair}")`);
          return [connector, id];
        }),
      );
      const company = await call(config, 'POST', '/companies', {
        name: required(rest.join(' ') || undefined, 'company name'),
        external_ids: externalIds,
      });
      out.print(company, () => `created company "${company.name}"\nid: ${company.id}`);
      return;
    }
    case 'company list': {
      const companies = await call(config, 'GET', '/companies?limit=200');
      out.print(companies, () => table(companies, ['id', 'name', 'created_at']));
      return;
    }
    case 'key create': {
      const companyId = required(rest[0], 'company id');
      const key = await call(config, 'POST', `/companies/${companyId}/api-keys`, { name: values.name ?? null });
      out.print(
        key,
        () =>
          `API key ${key.id} for company ${companyId}\n\n  ${key.key}\n\nShown once: store it now. Use it as: Authorization: Bearer <key>`,
      );
      return;
    }
    case 'key revoke': {
      const key = await call(config, 'DELETE', `/api-keys/${required(rest[0], 'key id')}`);
      out.print(key, () => `revoked key ${key.id} (${key.prefix}…) at ${key.revoked_at}`);
      return;
    }
    case 'vehicle add': {
      const companyId = required(rest[0], 'company id');
      const body: Record<string, unknown> = {
        name: values.name ?? null,
        vin: values.vin ?? null,
        license_plate: values.plate ?? null,
        make: values.make ?? null,
        model: values.model ?? null,
        year: values.year ? Number(values.year) : null,
        telematics_provider: values.provider ?? null,
      };
      if (values['provider-vehicle-id']) body.provider_vehicle_id = values['provider-vehicle-id'];
      const vehicle = await call(config, 'POST', `/companies/${companyId}/vehicles`, body);
      out.print(vehicle, () => `added vehicle "${vehicle.name ?? vehicle.id}"\nid: ${vehicle.id}`);
      return;
    }
    case 'vehicle list': {
      const vehicles = await call(config, 'GET', `/companies/${required(rest[0], 'company id')}/vehicles?limit=200`);
      out.print(vehicles, () =>
        table(
          vehicles.map((v: any) => ({
            ...v,
            status: v.active ? v.health.status : 'inactive',
            provider: v.telematics_provider ?? 'manual',
          })),
          ['id', 'name', 'license_plate', 'vin', 'provider', 'status'],
        ),
      );
      return;
    }
    case 'user add': {
      const companyId = required(values.company, '--company');
      const password = values.password ?? generatePassword();
      const user = await call(config, 'POST', `/companies/${companyId}/users`, {
        email: required(values.email, '--email'),
        name: required(values.name, '--name'),
        ...(values.role === undefined ? {} : { role: values.role }),
        password,
      });
      const generated = values.password === undefined;
      out.print(generated ? { ...user, password } : user, () =>
        [
          `created console user ${user.email}\nid: ${user.id}\nrole: ${user.role}`,
          ...(generated ? [`\n\n  password: ${password}\n\nShown once: give it to the user now.`] : []),
        ].join(''),
      );
      return;
    }
    case 'user list': {
      const users = await call(config, 'GET', `/companies/${required(values.company, '--company')}/users`);
      out.print(users, () => table(users, ['id', 'email', 'name', 'role', 'disabled_at']));
      return;
    }
    case 'user set-role': {
      const companyId = required(values.company, '--company');
      const role = required(values.role, '--role');
      const userId =
        values.user ?? (await liveUserIdOf(config, companyId, required(values.email, '--user or --email')));
      const user = await call(config, 'PATCH', `/companies/${companyId}/users/${userId}`, { role });
      out.print(user, () => `console user ${user.email} is now ${user.role}`);
      return;
    }
    case 'user disable': {
      const user = await call(config, 'DELETE', `/users/${required(rest[0], 'user id')}`);
      out.print(user, () => `disabled console user ${user.email} at ${user.disabled_at}; their sessions ended`);
      return;
    }
    case 'vehicle transfer': {
      const vehicleId = required(rest[0], 'vehicle id');
      const body: Record<string, unknown> = { to_company_id: required(rest[1], 'company id') };
      if (values.at) body.at = values.at;
      const vehicle = await call(config, 'POST', `/vehicles/${vehicleId}/transfer`, body);
      out.print(vehicle, () => `moved vehicle "${vehicle.name ?? vehicle.id}" to company ${vehicle.company_id}`);
      return;
    }
    case 'inbox failed': {
      const query = new URLSearchParams({ limit: values.limit ?? '50' });
      if (values.provider) query.set('provider', values.provider);
      if (values.connection) query.set('connection_id', values.connection);
      if (values.company) query.set('company_id', values.company);
      const rows = await call(config, 'GET', `/inbox/failed?${query}`);
      out.print(rows, () =>
        table(
          rows.map((r: any) => ({ ...r, error: shorten(r.error, 80) })),
          ['inbox_id', 'provider', 'connection_id', 'received_at', 'failed_attempts', 'error'],
        ),
      );
      return;
    }
    case 'inbox replay': {
      if (!values.since && !values.parked)
        throw new CliError(`inbox replay needs --since <ISO time> or --parked\n\n${usage}`);
      const since = values.since ? new Date(values.since) : null;
      if (since && Number.isNaN(since.getTime()))
        throw new CliError(`--since must be an ISO time such as 2026-11-01T00:00:00Z (got "${values.since}")`);
      const provider = values.provider ?? null;
      if (provider !== null && !isProviderId(provider))
        throw new CliError(`--provider must be one of ${Object.keys(adapters).join(', ')}`);
      const connectionId = values.connection ?? null;
      if (connectionId !== null && !isRecordId(connectionId))
        throw new CliError(`--connection must be a provider connection id (got "${connectionId}")`);
      const pool = createPool(config.databaseUrl, 2, createLogger('silent'));
      try {
        let last = 0;
        const filter = { since, provider, connectionId, parkedOnly: values.parked };
        const summary = await replayInbox(pool, adapters, filter, (progress) => {
          // At most ~10 redraws a second, and always the final one.
          if (!io.progress || (Date.now() - last < 100 && progress.done < progress.total)) return;
          last = Date.now();
          io.progress(progressBar(progress));
        });
        // Ends the redrawn progress line before the summary.
        if (io.progress) io.stderr('');
        out.print(
          summary,
          () =>
            `replayed ${summary.rows} inbox rows: ${summary.samples} samples, ${summary.changedVehicleIds.length} vehicles updated, ` +
            `${summary.failed} not normalizable, ${summary.parked} failed and parked, ` +
            `${summary.busy} skipped (being processed by a worker)`,
        );
      } finally {
        await pool.end();
      }
      return;
    }
    case 'status': {
      const intervalSeconds = positiveNumber(values.interval ?? '2', '--interval');
      const frames = values.count ? positiveNumber(values.count, '--count') : values.watch ? Infinity : 1;
      for (let frame = 0; frame < frames; frame++) {
        if (frame > 0) await new Promise((resolve) => setTimeout(resolve, intervalSeconds * 1000));
        const status = await call(config, 'GET', '/status');
        // A terminal redraws in place; a pipe or --json gets one snapshot after another.
        if (values.watch && io.progress && !values.json) io.stdout('\x1b[H\x1b[2J');
        out.print(status, () => renderStatus(status));
      }
      return;
    }
    default:
      throw new CliError(`unknown command "${command}"\n\n${usage}`);
  }
}

/** Runs one fleetctl command; resolves to the process exit code. */
export async function fleetctl(argv: string[], io: CliIo): Promise<number> {
  try {
    await main(argv, io);
    return 0;
  } catch (error) {
    const known =
      error instanceof CliError ||
      error instanceof ConfigError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    io.stderr(`fleetctl: ${known ? (error as Error).message : `unexpected error: ${(error as Error).message}`}`);
    return 1;
  }
}
