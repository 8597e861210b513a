// The web process serving the partner portal, the app's second entry (services/web/dashboard.ts):
// /partner, /partner/* and /p/<slug> answer partner.html with the page security headers, the dashboard's
// history routes still answer index.html, unknown /api/* stays the JSON 404, and a build without
// partner.html answers the portal's paths 503 rather than the dashboard. The portal's pages send no Referer
// (Referrer-Policy: no-referrer), an older invite or sign-in link (token in the path) is never cached, and a
// request logged with such a path has the token redacted.
import t from 'tap';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
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
    const tokenInPath = /^\/partner\/(invite|magic)\//.test(url);
    t.equal(r.headers['cache-control'], tokenInPath ? 'no-store' : 'no-cache', url);
    t.match(r.headers['content-security-policy'], /frame-ancestors 'none'/, url);
    t.equal(r.headers['x-frame-options'], 'DENY', url);
    t.equal(r.headers['referrer-policy'], 'no-referrer', url);
  }
  for (const url of ['/partner/invite', '/partner/magic']) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.same([r.body, r.headers['cache-control']], [PARTNER, 'no-cache'], `${url}: the link form of today`);
  }
  // Look-alikes are the dashboard's history routes, not the portal.
  for (const url of ['/', '/programs', '/partners', '/partnership', '/pricing', '/notifications']) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.body, INDEX, url);
    t.equal(r.headers['referrer-policy'], 'same-origin', `${url}: the dashboard's own policy`);
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

t.test('a logged request has the token of an older link redacted', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const a = await buildWebApp({ trustProxy: false, bodyLimit: 1 << 20 }, createLogger('test', 'info', sink), {
    dashboard: await loadDashboard(await dist(true)),
  });
  t.teardown(() => a.close());
  // What Fastify's request logging (off in the web process) and any `log.x({ req })` print.
  a.addHook('onRequest', async (req) => req.log.info({ req }, 'incoming request'));
  for (const url of ['/partner/invite/pinv_secret1', '/partner/magic/pmagic_secret2?x=1']) {
    t.equal((await a.inject({ method: 'GET', url, headers: html })).statusCode, 200, url);
  }
  await a.inject({ method: 'GET', url: '/partner/invite', headers: html });
  const logged = lines.map((l) => (JSON.parse(l) as { req?: { url: string } }).req?.url);
  t.same(logged, ['/partner/invite/[redacted]', '/partner/magic/[redacted]?x=1', '/partner/invite']);
  t.notMatch(lines.join(''), /secret/, 'no token anywhere in the log');
});
