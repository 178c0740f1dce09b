/**
 * The API's second ceiling: a bare Fastify route running the product's own by-id and list queries
 * with `pg` on the same database, with no authentication, envelope or response schema.
 * `node dist/bench/bare-pg-server.js <port> <database-url> <company-id>`
 */
import Fastify from 'fastify';
import { createPool } from '../src/db/pool.js';
import { findVehicle, listActiveVehicles } from '../src/db/vehicles.js';
import { createLogger } from '../src/log.js';

const [port = '3903', databaseUrl, companyId] = process.argv.slice(2);
if (!databaseUrl || !companyId) throw new Error('usage: bare-pg-server <port> <database-url> <company-id>');
const pool = createPool(databaseUrl, 10, createLogger('warn', 'bare-pg'));
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/vehicles/:id', async (request) =>
  findVehicle(pool, companyId, request.params.id),
);
app.get('/vehicles', async () => listActiveVehicles(pool, companyId, { limit: 200, offset: 0, updatedSince: null }));
app.get('/ready', async () => ({ ready: true }));
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))));
