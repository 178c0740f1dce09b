/**
 * Probes `GET /healthz` of service processes from a process of its own, so what it measures is
 * the services' event loops, not the bench's: every interval to each target, whether the previous
 * probe was answered or not (a stalled event loop shows in every probe it delays), over up to
 * `sockets` kept-alive connections per target opened at start (as a load balancer keeps its
 * health-check connections; a probe waits for a free one). `GET /stats`
 * answers, per target, the probes answered and failed and their latency p50, p99 and max in ms,
 * and this process's own worst event-loop delay (a check on the figures); `POST /reset` starts a
 * new phase. Usage: node healthz-prober.js <port> <interval ms> <service URL>...
 */
import { Agent, createServer, request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile } from './support.js';

const port = Number(process.argv[2] ?? 3969);
const intervalMs = Number(process.argv[3] ?? 10);
const targets = process.argv.slice(4);
const sockets = 32;
const agent = new Agent({ keepAlive: true, maxSockets: sockets, keepAliveMsecs: 1000 });

let phase = targets.map(() => ({ latencies: [] as number[], failed: 0 }));
let ownDelay = monitorEventLoopDelay({ resolution: 5 });
ownDelay.enable();

/** One probe to each target; answers when all are answered. */
function probeAll(current: typeof phase): Promise<void> {
  return Promise.all(
    targets.map(
      (target, i) =>
        new Promise<void>((resolve) => {
          const sent = performance.now();
          request(`${target}/healthz`, { agent }, (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode === 200) current[i]!.latencies.push(performance.now() - sent);
              else current[i]!.failed++;
              resolve();
            });
          })
            .on('error', () => {
              current[i]!.failed++;
              resolve();
            })
            .end();
        }),
    ),
  ).then(() => undefined);
}

// The connections, opened before any phase starts.
await Promise.all(Array.from({ length: sockets }, () => probeAll(phase)));

setInterval(() => void probeAll(phase), intervalMs);

const round = (ms: number) => Number(ms.toFixed(1));

createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/reset') {
    phase = targets.map(() => ({ latencies: [], failed: 0 }));
    ownDelay.disable();
    ownDelay = monitorEventLoopDelay({ resolution: 5 });
    ownDelay.enable();
    res.statusCode = 204;
    res.end();
    return;
  }
  // Also the readiness probe of startService (bench/support.ts).
  const stats = phase.map(({ latencies, failed }) => {
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      probes: sorted.length,
      failed,
      p50Ms: round(percentile(sorted, 50)),
      p99Ms: round(percentile(sorted, 99)),
      maxMs: round(sorted.at(-1) ?? 0),
    };
  });
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ targets: stats, proberDelayMaxMs: round(ownDelay.max / 1e6) }));
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
