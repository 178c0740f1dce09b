/**
 * The served /openapi.json, with and without the operator API: it passes Redocly's recommended
 * lint (redocly.yaml) without an error, every operation has a camelCase operationId (the SDK's
 * method names), and the SDK's generated files (packages/sdk/src/openapi.ts, operations.ts) are
 * what the public document generates today.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { lint, loadConfig } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let dir: string;
const documents: Record<'public' | 'operator', any> = { public: null, operator: null };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openapi-'));
  for (const [name, env] of [
    ['operator', {}],
    ['public', { ADMIN_TOKEN: '' }],
  ] as const) {
    const t: TestApp = await createTestApp(env);
    try {
      const response = await t.app.inject('/openapi.json');
      expect(response.statusCode).toBe(200);
      documents[name] = response.json();
    } finally {
      await t.close();
    }
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(['public', 'operator'] as const)('the %s OpenAPI document', (name) => {
  it("passes Redocly's recommended lint without errors", async () => {
    const file = join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify(documents[name]));
    const problems = await lint({
      ref: file,
      config: await loadConfig({ configPath: join(projectRoot, 'redocly.yaml') }),
    });
    const describe = (p: (typeof problems)[number]) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`;
    expect(problems.filter((p) => p.severity === 'error').map(describe)).toEqual([]);
    // The one warning left: the API names no licence (the service is not open source; the SDK is MIT).
    expect(problems.filter((p) => p.severity === 'warn').map((p) => p.ruleId)).toEqual(['info-license']);
  });

  it('is OpenAPI 3.1 with a camelCase operationId on every operation, and the operator API only with a token', () => {
    const doc = documents[name];
    expect(doc.openapi).toBe('3.1.0');
    const ids: string[] = [];
    for (const operations of Object.values<Record<string, any>>(doc.paths)) {
      for (const operation of Object.values(operations)) ids.push(operation.operationId);
    }
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['listVehicles', 'getVehicle', 'createWebhookSubscription']));
    const operator = ids.filter((id) => id.startsWith('admin'));
    if (name === 'operator') expect(operator).toContain('adminCreateCompany');
    else expect(operator).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes).includes('adminToken')).toBe(name === 'operator');
  });
});

describe('the SDK', () => {
  it('has generated files that match the public document (else: npm run sdk:generate)', async () => {
    const file = join(dir, 'sdk-source.json');
    await writeFile(file, JSON.stringify(documents.public));
    const check = await promisify(execFile)(
      process.execPath,
      [join(projectRoot, 'packages/sdk/scripts/generate.mjs'), file, '--check'],
      { cwd: projectRoot },
    ).catch((err: { code: number; stderr: string }) => err);
    expect('stderr' in check ? check.stderr : '').toBe('');
  }, 60_000);
});
