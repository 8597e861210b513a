// INTERIM (until dash-platform's cookie session and test/helpers/browser.ts are merged): a browser whose
// pages get the built SPA and reach the API with the user's Bearer session, the session endpoint answered
// from what the test knows.
import { readFile } from 'node:fs/promises';
import { mkdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import type { User } from '../helpers/accounts.ts';

export type { Page };
const DIST = join(import.meta.dirname, '../../services/dashboard/dist');
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

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };

export async function openAs(
  browser: Browser,
  baseUrl: string,
  user: User,
  workspaces: { id: number; role: string }[],
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  await context.route(`${baseUrl}/**`, async (route) => {
    const req = route.request();
    const u = new URL(req.url());
    if (u.pathname === '/api/auth/session' && req.method() === 'GET') {
      return route.fulfill({
        json: {
          data: {
            user: { id: user.userId, email: user.email, name: 'Test User' },
            workspaces: workspaces.map((w) => ({ ...w, name: `Workspace ${w.id}` })),
            csrf_token: 'x',
            expires_at: new Date(Date.now() + 3600_000).toISOString(),
          },
        },
      });
    }
    if (u.pathname.startsWith('/api/')) {
      return route.continue({ headers: { ...req.headers(), authorization: `Bearer ${user.session}` } });
    }
    const file = u.pathname.startsWith('/assets/') ? join(DIST, u.pathname) : join(DIST, 'index.html');
    return route.fulfill({
      body: await readFile(file),
      headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' },
    });
  });
  return { page: await context.newPage() };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
