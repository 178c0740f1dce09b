import { describe, expect, it } from 'vitest';
import { webhookApiVersion, webhookEnvelopeBytes } from '../../../src/webhooks/webhook-run.js';

describe('webhookEnvelopeBytes', () => {
  const data = {
    id: 'run-1',
    title: 'Brake "squeal" \u2014 front',
    items: [{ type: 'brake_inspection' }],
    customer: null,
  };

  it('wraps the stored run JSON, unchanged, in the envelope fields of the contract', () => {
    const bytes = webhookEnvelopeBytes(
      'run.completed',
      'evt-1',
      new Date('2026-11-22T07:00:00Z'),
      JSON.stringify(data),
    );
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({
      event: 'run.completed',
      event_id: 'evt-1',
      api_version: webhookApiVersion,
      timestamp: '2026-11-22T07:00:00.000Z',
      data,
    });
    expect(webhookApiVersion).toBe('2026-11-01');
    expect(bytes.toString('utf8')).toBe(
      `{"event":"run.completed","event_id":"evt-1","api_version":"2026-11-01","timestamp":"2026-11-22T07:00:00.000Z","data":${JSON.stringify(data)}}`,
    );
  });

  it('keeps the payload bytes as stored (no re-encoding of its text)', () => {
    const stored = '{"id": "run-2", "title": "caf\u00e9"}';
    const bytes = webhookEnvelopeBytes('webhook.test', 'evt-2', new Date(0), stored);
    const head =
      '{"event":"webhook.test","event_id":"evt-2","api_version":"2026-11-01","timestamp":"1970-01-01T00:00:00.000Z"';
    expect(bytes.equals(Buffer.from(`${head},"data":${stored}}`, 'utf8'))).toBe(true);
  });
});
