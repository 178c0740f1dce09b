/**
 * The developer console through inject, as a browser's forms talk to it: the sign-in form, the
 * session cookie, and the form token (`_csrf`) every signed-in POST carries. The browser flows
 * themselves are in console.test.ts (Chromium).
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export const consoleOrigin = 'http://console.test';
/** What a console page's own requests carry: its host, and the Origin the CSRF check wants. */
export const consoleHeaders = { host: 'console.test', origin: consoleOrigin };
const formType = { 'content-type': 'application/x-www-form-urlencoded' };

/** A form body; a repeated field (checkboxes) is sent once per value. */
export function formBody(fields: Record<string, string | string[]>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(name, v);
  return body.toString();
}

/** POST /console/sign-in as the form sends it; `headers` adds to the console's own or replaces them. */
export function postSignIn(
  t: TestApp,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { ...consoleHeaders, ...formType, ...headers },
    payload: formBody({ email, password }),
  });
}

/** The session cookie (`name=value`) a sign-in answer set. */
export function sessionCookieOf(response: { headers: Record<string, unknown> }): string {
  return String(response.headers['set-cookie']).split(';')[0]!;
}

/** The form token in a console page. */
export function csrfTokenOf(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
}

/** A signed-in browser: its cookie and form token, and requests that carry them. */
export interface ConsoleSession {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  /** Posts a form as the page does, with the session's form token added. */
  post(url: string, fields?: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
}

/** Signs in through the form (a 303 expected) and reads the form token from a page. */
export async function signInToConsole(t: TestApp, email: string, password: string): Promise<ConsoleSession> {
  const signedIn = await postSignIn(t, email, password);
  expect(signedIn.statusCode, signedIn.body).toBe(303);
  const cookie = sessionCookieOf(signedIn);
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { ...consoleHeaders, cookie } });
  const csrf = csrfTokenOf((await get('/console/vehicles')).body);
  const post = (url: string, fields: Record<string, string | string[]> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...consoleHeaders, ...formType, cookie },
      payload: formBody({ ...fields, _csrf: csrf }),
    });
  return { cookie, csrf, get, post };
}

/** A new console user of the company (through the operator API), signed in. */
export async function newConsoleUser(
  t: TestApp,
  companyId: string,
  email: string,
  password: string,
): Promise<ConsoleSession> {
  const created = await t.admin('POST', `/companies/${companyId}/users`, { email, name: 'Dev', password });
  expect(created.statusCode, created.body).toBe(201);
  return signInToConsole(t, email, password);
}
