/**
 * The soak bench's load driver, in its own process so that generating and signing pushes never
 * shares an event loop with the bench's read load (bench/soak.ts):
 * - pushes simulator batches of the bench fleet through the real push endpoint, paced at
 *   `readingsPerSecond` (at most `maxInFlight` pushes open; what it could not send in time is
 *   reported as `behindReadings`);
 * - push-to-visible probes: each probe vehicle in turn gets a push with a new fuel level, then its
 *   `GET /api/v1/vehicles/:id` on the read API is polled until the level shows; the time from the
 *   push being sent to that answer is one sample.
 * `GET /stats` answers the counts so far and the probe samples since the previous call.
 * Usage: node soak-driver.js, with the DriverOptions as JSON on stdin: they hold the push secret
 * and the API key, which a command line would show to every user of the machine (ps).
 */
import { createServer } from 'node:http';
import { createSimulatedFleet } from '../server/simulated-fleet.js';
import { generateBatches, pushBatch, type Batch } from './ingest.js';

export interface DriverOptions {
  port: number;
  pushUrl: string;
  readUrl: string;
  connectionId: string;
  pushSecret: string;
  apiKey: string;
  readingsPerSecond: number;
  /** The bench fleet's seed and size, started where the capacity phase's readings cannot reach. */
  fleet: { seed: number; vehicleCount: number; idPrefix: string; start: string };
  vehicleIds: string[];
  probes: Array<{ providerVehicleId: string; id: string }>;
}

export interface DriverStats {
  pushes: number;
  pushedReadings: number;
  behindReadings: number;
  pushErrors: number;
  probeErrors: number;
  probeTimeouts: number;
  lastError: string | null;
  /** Push-to-visible samples since the previous /stats, in milliseconds. */
  visibleMs: number[];
}

async function readInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const options = JSON.parse(await readInput()) as DriverOptions;
const maxInFlight = 16;
const refillReadings = 20_000;
const pacingIntervalMs = 20;
/**
 * A probe polls every tenth of the time waited so far, within these bounds: 25 ms resolution
 * near the 1 s target, and an overloaded API is not sent more polls the slower it answers.
 */
const probePollMs = { min: 25, max: 250 };
const probePauseMs = 100;
/**
 * A probe value not visible by then is recorded as a sample of this long (so a p99 over it is not
 * flattered by lost samples), counted in `probeTimeouts`, and the probe moves on.
 */
const probeTimeoutMs = 60_000;

const stats: DriverStats = {
  pushes: 0,
  pushedReadings: 0,
  behindReadings: 0,
  pushErrors: 0,
  probeErrors: 0,
  probeTimeouts: 0,
  lastError: null,
  visibleMs: [],
};
const fail = (counter: 'pushErrors' | 'probeErrors', error: unknown) => {
  stats[counter]++;
  stats.lastError = (error as Error).message;
};

const fleet = createSimulatedFleet({ ...options.fleet, start: new Date(options.fleet.start) });
const ready: Batch[] = generateBatches(fleet, refillReadings, options.vehicleIds);
let running = true;

function pace(): void {
  const started = performance.now();
  let scheduled = 0;
  let inFlight = 0;
  const timer = setInterval(() => {
    if (!running) return clearInterval(timer);
    const due = (options.readingsPerSecond * (performance.now() - started)) / 1000;
    while (scheduled < due && inFlight < maxInFlight) {
      if (ready.length === 0) ready.push(...generateBatches(fleet, refillReadings, options.vehicleIds));
      const batch = ready.shift()!;
      scheduled += batch.samples;
      inFlight++;
      pushBatch(options.pushUrl, options.connectionId, options.pushSecret, batch)
        .then(
          () => {
            stats.pushes++;
            stats.pushedReadings += batch.samples;
          },
          (error: unknown) => fail('pushErrors', error),
        )
        .finally(() => inFlight--);
    }
    stats.behindReadings = Math.max(0, Math.round(due - scheduled));
  }, pacingIntervalMs);
}

async function fuelLevelOf(id: string): Promise<unknown> {
  const response = await fetch(`${options.readUrl}/api/v1/vehicles/${id}`, {
    headers: { authorization: `Bearer ${options.apiKey}` },
  });
  if (response.status !== 200) throw new Error(`probe read answered ${response.status}`);
  return ((await response.json()) as { data: { signals: { fuel_percent?: number } } }).data.signals.fuel_percent;
}

async function probe(vehicle: DriverOptions['probes'][number], offset: number): Promise<void> {
  for (let n = offset; running; n++) {
    // Consecutive values always differ, so the one awaited cannot be mistaken for the last.
    const fuelPercent = 10 + (n % 80);
    const body = JSON.stringify({
      readings: [
        { vehicle: vehicle.providerVehicleId, ts: new Date().toISOString(), signals: { fuel_percent: fuelPercent } },
      ],
    });
    const sent = performance.now();
    try {
      await pushBatch(options.pushUrl, options.connectionId, options.pushSecret, { body, samples: 1 });
      while ((await fuelLevelOf(vehicle.id)) !== fuelPercent) {
        const waitedMs = performance.now() - sent;
        if (waitedMs > probeTimeoutMs) {
          stats.probeTimeouts++;
          break;
        }
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(probePollMs.max, Math.max(probePollMs.min, waitedMs / 10))),
        );
      }
      stats.visibleMs.push(Math.round(performance.now() - sent));
    } catch (error) {
      if (running) fail('probeErrors', error);
    }
    await new Promise((resolve) => setTimeout(resolve, probePauseMs));
  }
}

const server = createServer((request, response) => {
  if (request.method !== 'GET' || request.url !== '/stats') {
    response.statusCode = 404;
    return response.end();
  }
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify(stats));
  stats.visibleMs = [];
});
server.listen(options.port, '127.0.0.1', () => {
  pace();
  options.probes.forEach((vehicle, i) => void probe(vehicle, i * 40));
});
process.on('SIGTERM', () => {
  running = false;
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
