/**
 * The console's sign-in limit under concurrency (docs/console.md): attempts are
 * reserved in Redis before the password is checked, so a burst gets at most the limit of checks,
 * and the scrypt work queued at once is bounded. Real app (inject), real Postgres and Redis;
 * client addresses through X-Forwarded-For (TRUST_PROXY).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordWork } from '../../src/security/passwords.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { postSignIn } from '../helpers/console.js';

const password = 'a long enough password';
const perEmail = 5;
const perAddress = 10;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    TRUST_PROXY: 'true',
    CONSOLE_SIGN_IN_FAILURES_PER_EMAIL: String(perEmail),
    CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: String(perAddress),
  });
});
afterAll(() => t.close());

async function createUser(email: string): Promise<void> {
  const company = await t.createCompany();
  const response = await t.admin('POST', `/companies/${company.id}/users`, { email, name: 'Dev', password });
  expect(response.statusCode).toBe(201);
}

function signIn(email: string, address: string, pass = password) {
  return postSignIn(t, email, pass, { 'x-forwarded-for': address });
}

/** console_sign_ins_total by outcome, as /metrics shows it. */
async function signInCounts(): Promise<Record<string, number>> {
  const metric = await t.deps.metrics.registry.getSingleMetric('console_sign_ins_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

async function countsSince(before: Record<string, number>): Promise<Record<string, number>> {
  const after = await signInCounts();
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('console sign-in limit under concurrency', () => {
  it('checks at most the per-email limit of 40 concurrent wrong passwords for one email; the rest are 429 unchecked', async () => {
    await createUser('burst@example.test');
    const before = await signInCounts();
    // From 40 addresses, so only the email's limit applies.
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn('burst@example.test', `198.51.100.${i + 1}`, 'wrong password!')),
    );
    expect(tally(responses.map((r) => r.statusCode))).toEqual({ 401: perEmail, 429: 40 - perEmail });
    for (const refused of responses.filter((r) => r.statusCode === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toMatch(/role="alert">Too many failed sign-ins\. Try again in \d+ minutes/);
    }
    // The password was checked (scrypt ran) exactly perEmail times.
    expect(await countsSince(before)).toMatchObject({ wrong_password: perEmail, limited: 40 - perEmail });

    // The email stays closed for its window, even with the right password; other emails are unaffected.
    expect((await signIn('burst@example.test', '198.51.100.200')).statusCode).toBe(429);
    await createUser('bystander@example.test');
    expect((await signIn('bystander@example.test', '198.51.100.201')).statusCode).toBe(303);
  });

  it('checks at most the per-address limit of 40 concurrent wrong passwords from one address, whatever the emails', async () => {
    const before = await signInCounts();
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(`nobody${i}@example.test`, '203.0.113.7', 'wrong password!')),
    );
    expect(tally(responses.map((r) => r.statusCode))).toEqual({ 401: perAddress, 429: 40 - perAddress });
    expect(await countsSince(before)).toMatchObject({ wrong_password: perAddress, limited: 40 - perAddress });

    await createUser('nat@example.test');
    expect((await signIn('nat@example.test', '203.0.113.7')).statusCode).toBe(429);
    expect((await signIn('nat@example.test', '203.0.113.8')).statusCode).toBe(303);
  });

  it('counts only failures: a successful sign-in gives its reservation back', async () => {
    await createUser('steady@example.test');
    const address = (i: number) => `192.0.2.${i}`;
    for (let i = 0; i < perEmail - 1; i++) {
      expect((await signIn('steady@example.test', address(i), 'wrong password!')).statusCode).toBe(401);
    }
    // One failure short of the limit: each correct sign-in reserves the last attempt and gives it back.
    for (let i = 0; i < 3; i++) expect((await signIn('steady@example.test', address(10 + i))).statusCode).toBe(303);
    expect((await signIn('steady@example.test', address(20), 'wrong password!')).statusCode).toBe(401);
    expect((await signIn('steady@example.test', address(21))).statusCode).toBe(429);
  });

  it('bounds the password work queued at once: past it, 503 with Retry-After as an alert, and not counted as a failure', async () => {
    await createUser('crowded@example.test');
    // Fill the process's gate (it is this process's: the app runs in the test) with work held open.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const holders = Array.from({ length: passwordWork.running + passwordWork.waiting }, () =>
      passwordWork.run(() => held),
    );
    const before = await signInCounts();
    const refused = await Promise.all(
      Array.from({ length: 3 }, (_, i) => signIn('crowded@example.test', `100.64.1.${i + 1}`)),
    );
    letGo();
    await Promise.all(holders);
    for (const busy of refused) {
      expect(busy.statusCode).toBe(503);
      expect(busy.headers['retry-after']).toBe('1');
      expect(busy.body).toContain('role="alert">Too many sign-ins at this moment. Try again in a second.');
    }
    expect(await countsSince(before)).toMatchObject({ busy: 3, wrong_password: 0, signed_in: 0 });

    // Refused attempts were not failures: the email still has its whole budget.
    for (let i = 0; i < perEmail - 1; i++) {
      expect((await signIn('crowded@example.test', '100.64.1.9', 'wrong password!')).statusCode).toBe(401);
    }
    expect((await signIn('crowded@example.test', '100.64.1.9')).statusCode).toBe(303);
  });

  it('answers a burst of 40 sign-ins for 40 emails from 40 addresses with checks or 503s; the first the gate holds are checked', async () => {
    const before = await signInCounts();
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(`crowd${i}@example.test`, `100.64.2.${i + 1}`, 'wrong password!')),
    );
    const counts = tally(responses.map((r) => r.statusCode));
    expect(Object.keys(counts).every((status) => status === '401' || status === '503')).toBe(true);
    // The first running + waiting to arrive are always checked; later ones only if a slot was freed meanwhile.
    expect(counts[401]).toBeGreaterThanOrEqual(passwordWork.running + passwordWork.waiting);
    expect(await countsSince(before)).toMatchObject({ wrong_password: counts[401], busy: counts[503] ?? 0 });
  });
});
