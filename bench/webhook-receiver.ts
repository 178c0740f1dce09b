/**
 * The receiver both webhook bench paths send to, in its own process: verifies every
 * Service-Signature over the raw body, answers 204, and keeps counts and event-to-delivery
 * latencies (receipt time minus the envelope's timestamp) and connections opened. `GET /stats` reads them,
 * `POST /reset` starts a new phase. Usage: node webhook-receiver.js <port> <signing secret> [core|monitoring].
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { verifyMonitoringSignature, verifyServiceSignature } from '@fleet-telematics/sdk';

const port = Number(process.argv[2] ?? 3921);
const secret = process.argv[3] ?? '';
/** `core` (Service-Signature, the default) or `monitoring` (X-Service-Signature). */
const scheme = process.argv[4] ?? 'core';
const verified = (headers: IncomingHttpHeaders, body: Buffer) =>
  scheme === 'monitoring'
    ? verifyMonitoringSignature(headers['x-service-signature'] as string | undefined, body, secret).ok
    : verifyServiceSignature(headers['service-signature'] as string | undefined, body, secret).ok;

let received = 0;
let invalid = 0;
let connections = 0;
let latenciesMs: number[] = [];
const eventIds = new Set<string>();

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const server = createServer((request, response) => {
  // Also the readiness probe of startService (bench/support.ts).
  if (request.method === 'GET' && request.url === '/stats') {
    const sorted = [...latenciesMs].sort((a, b) => a - b);
    response.setHeader('content-type', 'application/json');
    response.end(
      JSON.stringify({
        received,
        invalid,
        connections,
        distinctEvents: eventIds.size,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
      }),
    );
    return;
  }
  if (request.method === 'POST' && request.url === '/reset') {
    received = 0;
    invalid = 0;
    connections = 0;
    latenciesMs = [];
    eventIds.clear();
    response.statusCode = 204;
    response.end();
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const receivedAt = Date.now();
    const body = Buffer.concat(chunks);
    received++;
    if (!verified(request.headers, body)) {
      invalid++;
    } else {
      const envelope = JSON.parse(body.toString('utf8')) as { event_id: string; timestamp: string };
      eventIds.add(envelope.event_id);
      latenciesMs.push(receivedAt - Date.parse(envelope.timestamp));
    }
    response.statusCode = 204;
    response.end();
  });
});
server.on('connection', () => connections++);
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
