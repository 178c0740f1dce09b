/**
 * The webhook verifiers on their own: the documented test vector (docs/webhooks.md), tampering,
 * age both ways, and every malformed header refused with its reason. Payloads signed by the
 * service's own signer are checked in test/integration/sdk.test.ts.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyCoreWebhook, verifyMonitoringWebhook, WebhookVerificationError } from '../src/index.js';

const secret = 'whsec_test_secret';
const body = '{"event":"run.created","event_id":"evt_1"}';
const t = 1795000000;
const vector = 'dc209901cf2f2b009a41a470fb649a61740a1b5592fe93d58149aa04561a9638';

function reason(verify: () => unknown): string {
  try {
    verify();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
  return 'accepted';
}

describe('verifyCoreWebhook', () => {
  const header = `t=${t},v1=${vector}`;

  it('accepts the documented test vector and answers the parsed event', () => {
    expect(verifyCoreWebhook(secret, header, body, { nowSec: t })).toEqual({ event: 'run.created', event_id: 'evt_1' });
    expect(verifyCoreWebhook(secret, header, Buffer.from(body), { nowSec: t + 300 })).toMatchObject({
      event_id: 'evt_1',
    });
    expect(verifyCoreWebhook(secret, header, new TextEncoder().encode(body), { nowSec: t })).toMatchObject({
      event: 'run.created',
    });
  });

  it('refuses a tampered body, another secret, and a signature outside the tolerance either way', () => {
    expect(reason(() => verifyCoreWebhook(secret, header, body.replace('evt_1', 'evt_2'), { nowSec: t }))).toBe(
      'mismatch',
    );
    expect(reason(() => verifyCoreWebhook('whsec_other', header, body, { nowSec: t }))).toBe('mismatch');
    expect(reason(() => verifyCoreWebhook(secret, header, body, { nowSec: t + 301 }))).toBe('expired');
    expect(reason(() => verifyCoreWebhook(secret, header, body, { nowSec: t - 301 }))).toBe('expired');
    expect(reason(() => verifyCoreWebhook(secret, header, body, { nowSec: t + 3600, toleranceSec: 3600 }))).toBe(
      'accepted',
    );
    // The real clock is years past the vector's t.
    expect(reason(() => verifyCoreWebhook(secret, header, body))).toBe('expired');
  });

  it('refuses missing and malformed headers', () => {
    expect(reason(() => verifyCoreWebhook(secret, undefined, body, { nowSec: t }))).toBe('missing');
    expect(reason(() => verifyCoreWebhook(secret, null, body, { nowSec: t }))).toBe('missing');
    for (const bad of [`v1=${vector}`, `t=${t}`, `t=x,v1=${vector}`, `t=${t},t=${t},v1=${vector}`, 'garbage']) {
      expect(
        reason(() => verifyCoreWebhook(secret, bad, body, { nowSec: t })),
        bad,
      ).toBe('malformed');
    }
    expect(reason(() => verifyCoreWebhook(secret, `t=${t},v1=${vector.slice(2)}`, body, { nowSec: t }))).toBe(
      'mismatch',
    );
  });
});

describe('verifyMonitoringWebhook', () => {
  const event = '{"event":"check_engine_light","event_id":"e1"}';
  const header = `sha256=${createHmac('sha256', secret).update(event).digest('hex')}`;

  it('accepts the signature of the exact bytes and answers the parsed event', () => {
    expect(verifyMonitoringWebhook(secret, header, event)).toEqual({ event: 'check_engine_light', event_id: 'e1' });
    expect(verifyMonitoringWebhook(secret, header, Buffer.from(event))).toMatchObject({ event_id: 'e1' });
  });

  it('refuses tampering, another secret, and missing or malformed headers', () => {
    expect(reason(() => verifyMonitoringWebhook(secret, header, event.replace('e1', 'e2')))).toBe('mismatch');
    expect(reason(() => verifyMonitoringWebhook('other', header, event))).toBe('mismatch');
    expect(reason(() => verifyMonitoringWebhook(secret, undefined, event))).toBe('missing');
    expect(reason(() => verifyMonitoringWebhook(secret, header.slice(7), event))).toBe('malformed');
    expect(reason(() => verifyMonitoringWebhook(secret, 'sha1=abc', event))).toBe('malformed');
  });
});
