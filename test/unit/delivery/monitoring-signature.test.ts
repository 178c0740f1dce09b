import { describe, expect, it } from 'vitest';
import { signMonitoringBody } from '../../../src/delivery/sign.js';
import { verifyMonitoringSignature } from '../../../packages/sdk/src/signatures.js';

// GitHub's published vector for the same scheme (X-Hub-Signature-256), from GitHub's "Validating webhook deliveries".
const secret = "It's a Secret to Everybody";
const body = Buffer.from('Hello, World!', 'utf8');
const expected = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

describe('monitoring X-Service-Signature', () => {
  it('is sha256= and the lowercase hex HMAC-SHA256 of the body bytes (GitHub vector)', () => {
    expect(signMonitoringBody(secret, body)).toBe(expected);
  });

  it('verifies the exact raw body in constant time and refuses anything else with a reason', () => {
    expect(verifyMonitoringSignature(expected, body, secret)).toEqual({ ok: true });
    expect(verifyMonitoringSignature(expected, 'Hello, World!', secret)).toEqual({ ok: true });
    expect(verifyMonitoringSignature(expected.toUpperCase().replace('SHA256=', 'sha256='), body, secret)).toEqual({
      ok: true,
    });
    expect(verifyMonitoringSignature(expected, Buffer.from('Hello, World?'), secret)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyMonitoringSignature(expected, body, 'another secret')).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyMonitoringSignature(undefined, body, secret)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyMonitoringSignature('', body, secret)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyMonitoringSignature(expected.slice(7), body, secret)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyMonitoringSignature(`${expected}00`, body, secret)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyMonitoringSignature('sha1=757107ea', body, secret)).toEqual({ ok: false, reason: 'malformed' });
  });
});
