/** A provider API faked on 127.0.0.1: real HTTP, routes answered by the test, every request logged. */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface FakeRequest {
  method: string;
  /** Path and query exactly as requested (undecoded). */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type FakeAnswer = { status?: number; headers?: Record<string, string>; body: unknown };

export interface FakeProvider {
  url: string;
  requests: FakeRequest[];
  /** Answers for `METHOD /path`; a function sees the request. */
  on(route: string, answer: FakeAnswer | ((request: FakeRequest) => FakeAnswer)): void;
  /** Answers served in order to the next requests, before routes and the fallback. */
  queue(...answers: FakeAnswer[]): void;
  /** Forgets logged requests and queued answers (routes stay). */
  reset(): void;
  close(): Promise<void>;
}

/** `fallback` answers requests no queued answer or route takes; without it they get a 404. */
export async function startFakeProvider(fallback?: (request: FakeRequest) => FakeAnswer): Promise<FakeProvider> {
  const routes = new Map<string, FakeAnswer | ((request: FakeRequest) => FakeAnswer)>();
  const queued: FakeAnswer[] = [];
  const requests: FakeRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      const route = routes.get(`${request.method} ${request.path}`);
      const answer = queued.shift() ??
        (typeof route === 'function' ? route(request) : route) ??
        fallback?.(request) ?? { status: 404, body: { error: 'no such route' } };
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    on: (route, answer) => routes.set(route, answer),
    queue: (...answers) => queued.push(...answers),
    reset: () => {
      requests.length = 0;
      queued.length = 0;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
