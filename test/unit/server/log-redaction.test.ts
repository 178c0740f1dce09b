import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { adapters } from '../../../providers/index.js';
import { providerSecretHeaders } from '../../../server/log-redaction.js';
import { createLogger } from '../../../src/log.js';

function capture(): { sink: Writable; text: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { sink, text: () => lines.join('') };
}

describe('log redaction of provider signatures', () => {
  it('every provider that pushes declares the headers that carry its signature or token', () => {
    for (const adapter of Object.values(adapters)) {
      if (adapter.push) expect(adapter.push.signatureHeaders.length, adapter.id).toBeGreaterThan(0);
    }
    expect(providerSecretHeaders).toEqual(expect.arrayContaining(['x-samsara-signature', 'sc-signature']));
  });

  it("redacts each provider's signature header from a logged request, and keeps the other headers", () => {
    const { sink, text } = capture();
    const log = createLogger('info', 'test', sink, providerSecretHeaders);
    const headers = Object.fromEntries(providerSecretHeaders.map((name) => [name, `secret-of-${name}`]));
    log.info({ req: { headers: { ...headers, 'content-type': 'application/json' } } }, 'push');
    for (const name of providerSecretHeaders) expect(text()).not.toContain(`secret-of-${name}`);
    expect(text()).toContain('[redacted]');
    expect(text()).toContain('application/json');
  });
});
