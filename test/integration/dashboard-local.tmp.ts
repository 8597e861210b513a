// TEMPORARY (until dash-platform's harness is merged): a browser launcher.
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

interface T {
  teardown(fn: () => unknown): void;
}
export async function openBrowser(t: T) {
  const b = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => b.close());
  const dir = join(import.meta.dirname, '../screenshots');
  mkdirSync(dir, { recursive: true });
  return {
    async page(t: T, viewport: { width: number; height: number }) {
      const ctx = await b.newContext({ viewport });
      t.teardown(() => ctx.close());
      const page: Page = await ctx.newPage();
      const consoleErrors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()} (${m.location().url})`);
      });
      page.on('pageerror', (e) => consoleErrors.push(`${page.url()}: ${e.message}`));
      const shot = (name: string) =>
        page.screenshot({ path: join(dir, `dashboard-${name}.png`), fullPage: true });
      return { page, consoleErrors, shot };
    },
  };
}
