// INTERIM (until dash-platform's test/helpers/browser.ts is merged): chromium as the issue prescribes and a
// context logged in with the real cookie session.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD } from '../helpers/accounts.ts';
import type { User } from '../helpers/accounts.ts';

export type { Page };
const SHOTS = join(import.meta.dirname, '../screenshots');

export async function launchBrowser(t: { teardown(f: () => Promise<void>): void }): Promise<Browser> {
  const b = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => b.close());
  return b;
}

/**
 * A fresh browser context logged in as `user` with the real cookie session (POST /api/auth/session sets
 * the HttpOnly svc_session cookie in the context; the SPA reads the CSRF token from GET /api/auth/session).
 */
export async function openAs(
  browser: Browser,
  baseUrl: string,
  user: Pick<User, 'email'>,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true, baseURL: baseUrl });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const login = await context.request.post('/api/auth/session', {
    data: { email: user.email, password: PASSWORD },
  });
  if (login.status() !== 200) throw new Error(`log in: ${login.status()} ${await login.text()}`);
  return { page: await context.newPage() };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
