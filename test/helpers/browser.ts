/**
 * What the console's Chromium tests share (test/integration/console*.test.ts): the browser and its
 * pages, signing in and the navigation, and checks: axe-core, the one h1, text of a locator, a
 * one-time secret gone after a reload, and the screenshots that CONSOLE_SCREENSHOTS=1 saves to
 * docs/images/console-<page>.png.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { projectRoot } from '../../src/paths.js';

const axeSource = readFileSync(join(projectRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const screenshots = process.env.CONSOLE_SCREENSHOTS === '1';

/** One headless Chromium (Debian's) for a test file; each page in a context of its own (its own cookies). */
export interface ConsoleBrowser {
  /** A page at the console's base URL; `options` add to its context's (JavaScript off, credentials). */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Closes every page's context, then the browser. */
  close(): Promise<void>;
}

export async function launchConsoleBrowser(baseURL: string): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
  const contexts: BrowserContext[] = [];
  return {
    async newPage(options = {}) {
      const context = await browser.newContext({ baseURL, ...options });
      contexts.push(context);
      // Fail within the test's own timeout, naming the locator that was not found.
      context.setDefaultTimeout(10_000);
      return context.newPage();
    },
    async close() {
      for (const context of contexts) await context.close();
      await browser.close();
    },
  };
}

/** Fills in and sends the sign-in form; what follows (the Vehicles page, an alert) is the caller's to check. */
export async function submitSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/console');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs in and waits for the page a sign-in lands on, Vehicles. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await submitSignIn(page, email, password);
  await page.getByRole('heading', { level: 1, name: 'Vehicles' }).waitFor();
}

/** Follows a link of the console's navigation and checks the page's one h1. */
export async function nav(page: Page, name: string, heading = name): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  await expectOneHeading(page, heading);
}

/** axe-core on the current page, once its transitions have ended: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  // Judged as shown, not mid-transition: Leaflet fades a popup in over 0.2 s, and until then its
  // translucent text fails color-contrast. Only running, finite ones are waited for (a paused or
  // endless one would never finish); a cancelled one is over.
  await page.evaluate(async () => {
    const animations = (globalThis as any).document.getAnimations() as any[];
    await Promise.all(
      animations
        .filter((a) => a.playState === 'running' && a.effect?.getComputedTiming().endTime !== Infinity)
        .map((a) => a.finished.catch(() => {})),
    );
  });
  // Evaluated through the DevTools protocol: a script tag would be refused by the console's CSP.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const result = await axe.run((globalThis as any).document);
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).join(', ')})`);
  });
  expect(violations).toEqual([]);
}

/** One h1, inside the main landmark. */
export async function expectOneHeading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole('main').getByRole('heading', { level: 1, name }).waitFor();
  expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);
}

/** The text of the one element the locator finds, once it is there. */
export async function textOf(locator: Locator): Promise<string> {
  await locator.waitFor();
  return (await locator.textContent())!.trim();
}

/** After a reload or Back on the page that showed a one-time secret: the field is gone, the page says why. */
export async function expectShownOnce(page: Page, label: string, secret: string, notice: RegExp): Promise<void> {
  expect(await textOf(page.getByRole('status'))).toMatch(notice);
  expect(await page.getByLabel(label).count()).toBe(0);
  expect(await page.content()).not.toContain(secret);
}

export async function shoot(page: Page, name: string): Promise<void> {
  if (screenshots)
    await page.screenshot({ path: join(projectRoot, 'docs', 'images', `console-${name}.png`), fullPage: true });
}
