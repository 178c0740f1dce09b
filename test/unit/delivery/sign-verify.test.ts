import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signCoreBody } from '../../../src/delivery/sign.js';
import { verifyServiceSignature } from '../../../packages/sdk/src/signatures.js';

const secret = 'whsec_test_secret';
const body = Buffer.from('{"event":"run.created","event_id":"evt_1"}');
const t = 1_795_000_000;
const now = { nowSeconds: t };
// Pinned: computed once and cross-checked with `openssl dgst -sha256 -hmac whsec_test_secret` over `1795000000.` + body.
const pinnedV1 = 'dc209901cf2f2b009a41a470fb649a61740a1b5592fe93d58149aa04561a9638';
// The same HMAC with Convoy's comma separator: must never be accepted.
const commaV1 = 'f911c7790d9124be70bfc7478a46129b5cb0de28790346b838baff1b3ef813e6';

describe('signCoreBody', () => {
  it('produces t=<ts>,v1=<hex> over `${t}.` + the body bytes (pinned vector)', () => {
    expect(signCoreBody(secret, body, t)).toBe(`t=${t},v1=${pinnedV1}`);
  });

  it('matches the documented header grammar', () => {
    expect(signCoreBody(secret, body, t)).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('signs bytes, not a re-encoded string: a non-UTF-8 body round-trips', () => {
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x80]);
    const expected = createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${t}.`), binary]))
      .digest('hex');
    expect(signCoreBody(secret, binary, t)).toBe(`t=${t},v1=${expected}`);
    expect(verifyServiceSignature(signCoreBody(secret, binary, t), binary, secret, now)).toEqual({
      ok: true,
      timestamp: t,
    });
  });

  it('refuses a timestamp that no verifier would parse', () => {
    expect(() => signCoreBody(secret, body, 1.5)).toThrow(RangeError);
    expect(() => signCoreBody(secret, body, -1)).toThrow(RangeError);
  });
});

describe('verifyServiceSignature', () => {
  const header = `t=${t},v1=${pinnedV1}`;

  it('accepts the pinned header, with the body as a Buffer or a string', () => {
    expect(verifyServiceSignature(header, body, secret, now)).toEqual({ ok: true, timestamp: t });
    expect(verifyServiceSignature(header, body.toString('utf8'), secret, now)).toEqual({ ok: true, timestamp: t });
  });

  it('rejects a tampered body and a wrong secret', () => {
    const tampered = Buffer.from(body.toString().replace('evt_1', 'evt_2'));
    expect(verifyServiceSignature(header, tampered, secret, now)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyServiceSignature(header, Buffer.concat([body, Buffer.from('\n')]), secret, now)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyServiceSignature(header, body, 'whsec_other', now)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('rejects a signature computed with "," instead of "." between t and the body', () => {
    expect(verifyServiceSignature(`t=${t},v1=${commaV1}`, body, secret, now)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('rejects a t that was not the signed one', () => {
    expect(verifyServiceSignature(`t=${t + 1},v1=${pinnedV1}`, body, secret, { nowSeconds: t + 1 })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('enforces the tolerance in both directions, inclusive at the edge', () => {
    expect(verifyServiceSignature(header, body, secret, { nowSeconds: t + 300 }).ok).toBe(true);
    expect(verifyServiceSignature(header, body, secret, { nowSeconds: t - 300 }).ok).toBe(true);
    expect(verifyServiceSignature(header, body, secret, { nowSeconds: t + 301 })).toEqual({
      ok: false,
      reason: 'expired',
    });
    // A t 301 s in the future (sender clock ahead or forged) is refused too.
    expect(verifyServiceSignature(header, body, secret, { nowSeconds: t - 301 })).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect(verifyServiceSignature(header, body, secret, { nowSeconds: t + 60, toleranceSeconds: 30 })).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('uses the real clock by default', () => {
    const fresh = Math.floor(Date.now() / 1000);
    expect(verifyServiceSignature(signCoreBody(secret, body, fresh), body, secret).ok).toBe(true);
    expect(verifyServiceSignature(header, body, secret)).toEqual({ ok: false, reason: 'expired' });
  });

  it('accepts any matching v1 of several (secret rotation), in any position', () => {
    const other = signCoreBody('whsec_old', body, t).split('v1=')[1]!;
    expect(verifyServiceSignature(`t=${t},v1=${other},v1=${pinnedV1}`, body, secret, now)).toEqual({
      ok: true,
      timestamp: t,
    });
    expect(verifyServiceSignature(`t=${t},v1=${pinnedV1},v1=${other}`, body, secret, now)).toEqual({
      ok: true,
      timestamp: t,
    });
    expect(verifyServiceSignature(`t=${t},v1=${other},v1=${other}`, body, secret, now)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('ignores other schemes: a v0-only header has nothing to verify, a v0 beside v1 is skipped', () => {
    expect(verifyServiceSignature(`t=${t},v0=${pinnedV1}`, body, secret, now)).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyServiceSignature(`t=${t},v0=deadbeef,v1=${pinnedV1}`, body, secret, now)).toEqual({
      ok: true,
      timestamp: t,
    });
  });

  it('tolerates whitespace around items and accepts upper-case hex', () => {
    expect(verifyServiceSignature(`  t=${t} , v1=${pinnedV1}  `, body, secret, now).ok).toBe(true);
    expect(verifyServiceSignature(`t=${t},v1=${pinnedV1.toUpperCase()}`, body, secret, now).ok).toBe(true);
    // Whitespace inside the digest is not whitespace around it.
    expect(
      verifyServiceSignature(`t=${t},v1=${pinnedV1.slice(0, 10)} ${pinnedV1.slice(10)}`, body, secret, now).ok,
    ).toBe(false);
  });

  it('reports a missing header', () => {
    expect(verifyServiceSignature(undefined, body, secret, now)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyServiceSignature('', body, secret, now)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyServiceSignature('   ', body, secret, now)).toEqual({ ok: false, reason: 'missing' });
  });

  it.each([
    ['no t', `v1=${pinnedV1}`],
    ['no v1', `t=${t}`],
    ['t not digits', `t=abc,v1=${pinnedV1}`],
    ['t fractional', `t=${t}.5,v1=${pinnedV1}`],
    ['t negative', `t=-${t},v1=${pinnedV1}`],
    ['two t', `t=${t},t=${t},v1=${pinnedV1}`],
    ['item without =', `t=${t},v1=${pinnedV1},garbage`],
    ['dot-separated items', `t=${t}.v1=${pinnedV1}`],
  ])('rejects a malformed header: %s', (_name, value) => {
    expect(verifyServiceSignature(value, body, secret, now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('never throws on a digest of the wrong length or alphabet', () => {
    for (const v1 of ['', 'ab', pinnedV1.slice(0, 63), `${pinnedV1}00`, 'z'.repeat(64), 'é'.repeat(32)]) {
      expect(verifyServiceSignature(`t=${t},v1=${v1}`, body, secret, now)).toEqual({ ok: false, reason: 'mismatch' });
    }
  });
});
