// A method a path does not declare is 405 with `Allow` (RFC 9110) and an `{ error }` body; an unknown path
// stays 404 (shared/http/route-methods.ts, the not-found handler of shared/http/server.ts). Checked on the
// web process's own app, built offline (no Postgres, Kafka or port): every path of its OpenAPI document,
// and the dashboard's GET catch-all, which hands API paths back to the same handler.
import t from 'tap';
import { buildOfflineWebApp } from '../../scripts/lib/openapi.ts';
import { methodNotAllowed } from '../../shared/http/server.ts';
import { routePattern } from '../../shared/http/route-methods.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'] as const;

const app = await buildOfflineWebApp({ dashboard: null });
t.teardown(() => app.close());
await app.ready();
const doc = app.swagger() as { paths: Record<string, Record<string, unknown>> };

/** A concrete URL of an OpenAPI path: each `{param}` becomes 1. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');

t.test('every documented path: an undeclared method is 405 with Allow', async (t) => {
  const paths = Object.entries(doc.paths);
  t.ok(paths.length > 80, `${paths.length} documented paths`);
  for (const [path, ops] of paths) {
    const declared = Object.keys(ops).map((m) => m.toUpperCase());
    const url = concrete(path);
    for (const method of METHODS) {
      if (declared.includes(method) || (method === 'HEAD' && declared.includes('GET'))) continue;
      // The tracking routes' CORS preflights answer OPTIONS themselves.
      if (method === 'OPTIONS' && /\/(click|lead)$/.test(path)) continue;
      const r = await app.inject({ method, url });
      t.equal(r.statusCode, 405, `${method} ${path}`);
      const allow = String(r.headers.allow).split(', ');
      for (const m of declared)
        t.ok(allow.includes(m), `${method} ${path}: Allow ${allow.join(', ')} has ${m}`);
      if (declared.includes('GET')) t.ok(allow.includes('HEAD'), `${path}: HEAD with GET`);
      if (method !== 'HEAD') t.same(r.json(), { error: methodNotAllowed(method, url, allow) });
    }
  }
});

t.test('what Allow lists, exactly', async (t) => {
  const cases: [string, string, string][] = [
    ['PATCH', '/api/auth/login', 'POST'],
    ['PUT', '/api/auth/session', 'DELETE, GET, HEAD, POST'],
    ['PATCH', '/api/advertiser/affiliate-programs/7', 'DELETE, GET, HEAD, PUT'],
    ['GET', '/api/v1/track/click', 'OPTIONS, POST'],
    ['DELETE', '/js/svc-tracker.js', 'GET, HEAD'],
  ];
  for (const [method, url, allow] of cases) {
    const r = await app.inject({ method: method as 'GET', url });
    t.same([r.statusCode, r.headers.allow], [405, allow], `${method} ${url}`);
  }
  // The query string is not part of the path.
  const q = await app.inject({ method: 'PATCH', url: '/api/auth/login?x=1' });
  t.same([q.statusCode, q.json()], [405, { error: methodNotAllowed('PATCH', '/api/auth/login', ['POST']) }]);
});

t.test('a body of any type: still the 405, whatever the body', async (t) => {
  for (const [type, payload] of [
    ['text/plain', 'x'],
    ['application/xml', '<a/>'],
    ['application/json', '{'],
  ] as const) {
    const r = await app.inject({
      method: 'PUT',
      url: '/api/auth/login',
      headers: { 'content-type': type },
      payload,
    });
    t.same([r.statusCode, r.headers.allow], [405, 'POST'], type);
  }
});

t.test('unknown paths stay 404', async (t) => {
  for (const [method, url] of [
    ['GET', '/api/nope'],
    ['POST', '/api/nope'],
    ['PATCH', '/api/advertiser/affiliate-programs/7/nope'],
    ['GET', '/api/advertiser/affiliate-programs/7/'],
    ['POST', '/programs'],
  ] as const) {
    const r = await app.inject({ method, url, headers: { accept: 'text/html' } });
    t.same(
      [r.statusCode, r.headers.allow, r.json()],
      [404, undefined, { error: `Route ${method} ${url} not found` }],
    );
  }
});

t.test("the dashboard's GET catch-all hands API paths to the same answer", async (t) => {
  const r = await app.inject({ method: 'GET', url: '/api/auth/login', headers: { accept: 'text/html' } });
  t.same([r.statusCode, r.headers.allow], [405, 'POST']);
  const head = await app.inject({ method: 'HEAD', url: '/api/auth/login' });
  t.same([head.statusCode, head.headers.allow], [405, 'POST']);
});

t.test('routePattern: a parameter is one non-empty segment', async (t) => {
  const p = routePattern('/api/x/:id/y.json');
  t.ok(p.test('/api/x/12/y.json'));
  t.notOk(p.test('/api/x//y.json'));
  t.notOk(p.test('/api/x/1/2/y.json'));
  t.notOk(p.test('/api/x/1/yxjson'), 'the dot is literal');
});

t.test("routePattern: a parameter's own pattern (`:id(^\\d+)`) is kept", async (t) => {
  const p = routePattern('/api/imports/:importId(^\\d+)/errors');
  t.ok(p.test('/api/imports/12/errors'));
  t.notOk(p.test('/api/imports/campaigns/errors'), 'a word is not an id');
  t.notOk(p.test('/api/imports//errors'));
});

t.test(
  'a static path beside a numeric parameter: its other methods are 405, not the parameter route',
  async (t) => {
    const r = await app.inject({
      method: 'GET',
      url: '/api/advertiser/affiliate-programs/1/imports/campaigns',
    });
    t.equal(r.statusCode, 405);
    t.equal(r.headers.allow, 'POST');
  },
);
