/** A webhook receiver on 127.0.0.1: real HTTP, every request kept with its raw body; answers set by the test. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  json: any;
  /** When the request was complete (Date.now()). */
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer requests to `path` (default 200 {ok:true}); delayMs holds the answer back. */
  answer(
    path: string,
    answer: { status?: number; headers?: Record<string, string>; body?: string; delayMs?: number },
  ): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const answers = new Map<
    string,
    { status?: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  >();
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = null;
      }
      received.push({ path, headers: req.headers, rawBody, json, at: Date.now() });
      const answer = answers.get(path) ?? {};
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body ?? '{"ok":true}');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    received,
    answer: (path, answer) => answers.set(path, answer),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
