// The web process serving the dashboard SPA (services/web/dashboard.ts), from a dist written here: hashed
// assets immutable, index.html no-cache with the security headers, history routes answered with
// index.html for HTML requests only, unknown /api/* and missing assets still the JSON 404, gzip when
// accepted, and a clear 503 when the dashboard was never built.
import t from 'tap';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildWebApp } from '../../services/web/app.ts';
import { IMMUTABLE, NOT_BUILT, loadDashboard } from '../../services/web/dashboard.ts';
import type { DashboardFiles } from '../../services/web/dashboard.ts';
import { createLogger } from '../../shared/logger.ts';

const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head></html>';
const JS = `console.log(${JSON.stringify('x'.repeat(4000))});`;

const dir = await mkdtemp(join(tmpdir(), 'svc-dist-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await mkdir(join(dir, 'assets'));
await writeFile(join(dir, 'index.html'), INDEX);
await writeFile(join(dir, 'assets', 'index-abc123.js'), JS);
await writeFile(join(dir, 'assets', 'index-def456.css'), 'body{margin:0}');
await writeFile(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
await writeFile(join(dir, '.build-stamp'), '{}');

async function app(dashboard: DashboardFiles | null) {
  const a = await buildWebApp({ trustProxy: false, bodyLimit: 1 << 20 }, createLogger('test', 'silent'), {
    dashboard,
  });
  t.teardown(() => a.close());
  return a;
}

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

t.test('files, content types and caching', async (t) => {
  const a = await app(await loadDashboard(dir));
  const index = await a.inject({ method: 'GET', url: '/', headers: html });
  t.equal(index.statusCode, 200);
  t.equal(index.body, INDEX);
  t.equal(index.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(index.headers['cache-control'], 'no-cache');
  t.match(index.headers['content-security-policy'], /script-src 'self'/);
  t.equal(index.headers['x-content-type-options'], 'nosniff');

  const js = await a.inject({ method: 'GET', url: '/assets/index-abc123.js' });
  t.equal(js.statusCode, 200);
  t.equal(js.body, JS);
  t.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal(js.headers['cache-control'], IMMUTABLE);
  const css = await a.inject({ method: 'GET', url: '/assets/index-def456.css' });
  t.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  t.equal(css.headers['cache-control'], IMMUTABLE);
  const svg = await a.inject({ method: 'GET', url: '/favicon.svg' });
  t.equal(svg.headers['content-type'], 'image/svg+xml');
  t.equal(svg.headers['cache-control'], 'no-cache', 'unhashed files are revalidated');
  t.equal(
    (await a.inject({ method: 'GET', url: '/.build-stamp' })).statusCode,
    404,
    'dotfiles are not served',
  );

  const gz = await a.inject({
    method: 'GET',
    url: '/assets/index-abc123.js',
    headers: { 'accept-encoding': 'gzip, br' },
  });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.equal(gz.headers.vary, 'accept-encoding');
  t.equal(gunzipSync(gz.rawPayload).toString(), JS);
  t.ok(gz.rawPayload.length < JS.length / 4);
  t.equal((await a.inject({ method: 'HEAD', url: '/' })).statusCode, 200, 'HEAD /');
});

t.test('history routes answer index.html; the API, tracking and missing assets do not', async (t) => {
  const a = await app(await loadDashboard(dir));
  for (const url of ['/programs', '/programs/1/overview', '/settings', '/login', '/docs', '/nope?x=1']) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.statusCode, 200, url);
    t.equal(r.body, INDEX, url);
    t.equal(r.headers['cache-control'], 'no-cache');
  }
  for (const url of [
    '/api/nope',
    '/api/v1/track/nope',
    '/track/x',
    '/healthz/x',
    '/readyz/x',
    '/metrics',
    '/js/x.js',
  ]) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.statusCode, 404, url);
    t.same(r.json(), { error: `Route GET ${url} not found` }, url);
  }
  const asset = await a.inject({ method: 'GET', url: '/assets/index-old999.js', headers: html });
  t.equal(asset.statusCode, 404, 'a replaced asset is a 404, not HTML');
  const json = await a.inject({ method: 'GET', url: '/programs', headers: { accept: 'application/json' } });
  t.equal(json.statusCode, 404, 'not an HTML request: the JSON 404');
  // curl and most HTTP clients send */*; SPA servers answer them the page (issue 20: GET /docs).
  for (const accept of ['*/*', 'application/json, */*;q=0.1', 'text/*', 'TEXT/HTML']) {
    const r = await a.inject({ method: 'GET', url: '/docs', headers: { accept } });
    t.equal(r.statusCode, 200, `Accept: ${accept} gets the page`);
    t.equal(r.body, INDEX);
  }
  t.equal((await a.inject({ method: 'GET', url: '/docs' })).statusCode, 404, 'no Accept: the JSON 404');
  for (const accept of ['application/json', 'image/png, application/xml', 'text/htmlx']) {
    const r = await a.inject({ method: 'GET', url: '/docs', headers: { accept } });
    t.equal(r.statusCode, 404, `Accept: ${accept} is not HTML`);
  }
  t.equal((await a.inject({ method: 'POST', url: '/programs', headers: html })).statusCode, 404, 'POST');
  t.equal(
    (await a.inject({ method: 'GET', url: '/%E0%A4%A', headers: html })).statusCode,
    400,
    'a malformed URL is a 400 (Fastify), not a 500',
  );
  t.equal((await a.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'real routes win');
});

t.test('not built: the pages answer a clear 503, the rest is unchanged', async (t) => {
  t.equal(await loadDashboard(join(dir, 'missing')), null);
  const a = await app(null);
  for (const url of ['/', '/programs/1/overview']) {
    const r = await a.inject({ method: 'GET', url, headers: html });
    t.equal(r.statusCode, 503, url);
    t.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    t.match(r.body, NOT_BUILT);
  }
  t.equal((await a.inject({ method: 'GET', url: '/api/nope', headers: html })).statusCode, 404);
  t.equal((await a.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
});
