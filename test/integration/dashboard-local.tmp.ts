// TEMPORARY (until dash-platform's harness is merged): a browser launcher and a server that serves the
// built SPA and proxies the rest to the service, keeping the Host header (so same-origin stays same-origin).
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

interface T {
  teardown(fn: () => unknown): void;
}
const DIST = join(import.meta.dirname, '../../services/dashboard/dist');
const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html' };

export async function serveDashboard(t: T, target: string): Promise<string> {
  const tgt = new URL(target);
  const server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    if (path.startsWith('/api/') || path.startsWith('/js/')) {
      const up = request(
        { host: tgt.hostname, port: tgt.port, path: req.url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        },
      );
      req.pipe(up);
      return;
    }
    const file = join(DIST, path);
    if (extname(path) && existsSync(file)) {
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
      return res.end(readFileSync(file));
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(readFileSync(join(DIST, 'index.html')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
