// The web process serving the partner portal, the app's second entry (services/web/dashboard.ts):
// /partner, /partner/* and /p/<slug> answer partner.html with the page security headers, the dashboard's
// history routes still answer index.html, unknown /api/* stays the JSON 404, and a build without
// partner.html answers the portal's paths 503 rather than the dashboard.
import t from 'tap';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWebApp } from '../../services/web/app.ts';
import { NOT_BUILT, loadDashboard } from '../../services/web/dashboard.ts';
import type { DashboardFiles } from '../../services/web/dashboard.ts';
import { createLogger } from '../../shared/logger.ts';

const INDEX =
  '<!doctype html><title>dashboard</title><script type="module" src="/assets/index-a1.js"></script>';
const PARTNER =
  '<!doctype html><title>portal</title><script type="module" src="/assets/partner-b2.js"></script>';

async function dist(withPortal: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-portal-dist-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), INDEX);
  if (withPortal) await writeFile(join(dir, 'partner.html'), PARTNER);
  await writeFile(join(dir, 'assets', 'index-a1.js'), 'console.log(1)');
  await writeFile(join(dir, 'assets', 'partner-b2.js'), 'console.log(2)');
  return dir;
}

async function app(dashboard: DashboardFiles | null) {
  const a = await buildWebApp({ trustProxy: false, bodyLimit: 1 << 20 }, createLogger('test', 'silent'), {
    dashboard,
  });
  t.teardown(() => a.close());
  return a;
}

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

t.test('portal paths answer partner.html; the dashboard keeps index.html', async (t) => {
  const a = await app(await loadDashboard(await dist(true)));
  for (const url of [
    '/partner',
    '/partner/',
    '/partner/login',
    '/partner/programs/12',
    '/partner/invite/pinv_abc',
    '/partner/magic/pml_abc?x=1',
    '/p/demo',
    '/p/some-program/',
  ]) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.statusCode, 200, url);
    t.equal(r.body, PARTNER, url);
    t.equal(r.headers['cache-control'], 'no-cache', url);
    t.match(r.headers['content-security-policy'], /frame-ancestors 'none'/, url);
    t.equal(r.headers['x-frame-options'], 'DENY', url);
  }
  // Look-alikes are the dashboard's history routes, not the portal.
  for (const url of ['/', '/programs', '/partners', '/partnership', '/pricing', '/notifications']) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.body, INDEX, url);
  }
  for (const url of ['/api/partner/nope', '/api/public/programs/x/nope']) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.statusCode, 404, url);
    t.same(r.json(), { error: `Route GET ${url} not found` }, url);
  }
  const json = await a.inject({ method: 'GET', url: '/partner/', headers: { accept: 'application/json' } });
  t.equal(json.statusCode, 404, 'not an HTML request: the JSON 404');
  const asset = await a.inject({ method: 'GET', url: '/assets/partner-b2.js' });
  t.equal(asset.statusCode, 200, 'the portal script itself');
});

t.test('a build without partner.html: the portal paths say so, never the dashboard', async (t) => {
  const a = await app(await loadDashboard(await dist(false)));
  const r = await a.inject({ method: 'GET', url: '/partner/', headers: html });
  t.equal(r.statusCode, 503);
  t.match(r.body, NOT_BUILT);
  t.equal((await a.inject({ method: 'GET', url: '/programs', headers: html })).body, INDEX);
});
