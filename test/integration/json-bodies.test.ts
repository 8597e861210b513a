// Request bodies are JSON (docs/api.md "Request bodies and cross-site writes"; docs/security.md "Cross-site requests and tokens in links"):
// outside the tracking routes and the processor webhooks, a body of any other type (or of none) is 415
// `Content-Type must be application/json`, whatever the route, before the body is read; a request without a
// body needs no type; a missing credential is 401 first. The tracking routes still read text/plain (the
// browser tracker's and sendBeacon's type) and the processor webhooks take any body raw.
import t from 'tap';
import { createLink, createProgram, startServices, testSql } from '../helpers/stack.ts';
import { bearer, signup } from '../helpers/accounts.ts';
import { signature, stripeEvent, checkoutSession } from '../helpers/stripe.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const NOT_JSON = { error: 'Content-Type must be application/json' };

async function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Uint8Array,
) {
  const res = await fetch(url(path), { method, headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed };
}

const owner = await signup(svc);
const auth = bearer(owner.session);
const programs = `/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`;
const created = await raw(
  'POST',
  programs,
  { ...auth, 'content-type': 'application/json' },
  '{"name":"Kept"}',
);
const programId = (created.body as { data: { id: number } }).data.id;
const countPrograms = async () =>
  (
    await sql<
      { n: number }[]
    >`select count(*)::int as n from programs where workspace_id = ${owner.workspaceId}`
  )[0]!.n;

t.test('a body that is not application/json is 415, on every kind of route', async (t) => {
  const before = await countPrograms();
  const types: [string, Record<string, string>, string | Uint8Array][] = [
    ['text/plain', { 'content-type': 'text/plain' }, '{"name":"X"}'],
    ['text/plain;charset=UTF-8', { 'content-type': 'text/plain;charset=UTF-8' }, '{"name":"X"}'],
    ['urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'name=X'],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=b' }, '--b\r\n\r\nX\r\n--b--'],
    ['application/xml', { 'content-type': 'application/xml' }, '<name>X</name>'],
    ['a +json type', { 'content-type': 'application/merge-patch+json' }, '{"name":"X"}'],
    ['a look-alike', { 'content-type': 'application/jsonx' }, '{"name":"X"}'],
    ['no Content-Type at all', {}, new TextEncoder().encode('{"name":"X"}')],
  ];
  const routes: [string, string, Record<string, string>][] = [
    ['POST', programs, auth],
    ['PUT', `/api/advertiser/affiliate-programs/${programId}`, auth],
    ['POST', '/api/auth/signup', {}],
    ['POST', '/api/partner/auth/magic-link', {}],
    ['POST', '/api/partner/auth/login', {}],
    ['POST', '/api/public/programs/nope/apply', {}],
  ];
  for (const [method, path, headers] of routes) {
    for (const [what, type, body] of types) {
      const r = await raw(method, path, { ...headers, ...type }, body);
      t.same([r.status, r.body], [415, NOT_JSON], `${method} ${path.split('?')[0]}: ${what}`);
    }
  }
  t.equal(await countPrograms(), before, 'nothing was made');
  const [kept] = await sql<{ name: string }[]>`select name from programs where id = ${programId}`;
  t.equal(kept!.name, 'Kept', 'nothing was changed');
});

t.test('JSON with parameters or in another case is JSON', async (t) => {
  for (const type of [
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset=UTF-8',
  ]) {
    const r = await raw('POST', programs, { ...auth, 'content-type': type }, `{"name":"${type}"}`);
    t.equal(r.status, 201, type);
  }
});

t.test('a request without a body needs no Content-Type', async (t) => {
  const live = await raw('POST', `/api/advertiser/affiliate-programs/${programId}/go-live`, auth);
  t.equal(live.status, 200, 'go-live, no body');
  const other = await signup(svc);
  const out = await raw('POST', '/api/auth/logout', bearer(other.session));
  t.equal(out.status, 204, 'logout, no body');
  const again = await raw('POST', '/api/auth/logout', bearer(other.session));
  t.equal(again.status, 401, 'the session is gone');
});

t.test('the order: a missing credential, then the type, then the size, then the JSON', async (t) => {
  const text = { 'content-type': 'text/plain' };
  const json = { 'content-type': 'application/json' };
  const noCredential = await raw('POST', programs, text, 'x');
  t.same(noCredential, { status: 401, body: { error: 'Authorization header is required' } }, '401 first');
  const big = 'x'.repeat(70 * 1024);
  t.same(await raw('POST', programs, { ...auth, ...text }, big), { status: 415, body: NOT_JSON }, 'then 415');
  t.same(
    await raw('POST', programs, { ...auth, ...json }, `{"name":"${big}"}`),
    { status: 413, body: { error: 'Request body is too large' } },
    'a JSON body over the limit: 413',
  );
  t.same(
    await raw('POST', programs, { ...auth, ...json }, '{"name":'),
    { status: 400, body: { error: 'Invalid JSON body' } },
    'bad JSON: 400',
  );
});

t.test('the tracking routes still read JSON sent as text/plain', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const body = JSON.stringify({ affiliate_url: `https://shop.example/?aff=${link.shortLink}` });
  for (const path of ['/api/v1/track/click', '/api/tracking/click']) {
    for (const type of ['text/plain;charset=UTF-8', 'application/json']) {
      const r = await raw('POST', path, { 'content-type': type }, body);
      t.equal(r.status, 200, `${path} ${type}`);
      t.match(r.body, { success: true, click_id: /^cust_/ });
    }
  }
  const form = await raw(
    'POST',
    '/api/v1/track/click',
    { 'content-type': 'application/x-www-form-urlencoded' },
    'a=1',
  );
  t.same([form.status, form.body], [415, NOT_JSON], 'a form is not JSON there either');
});

t.test('the processor webhooks take any body raw, verified by its signature', async (t) => {
  const secret = 'whsec_json_bodies_1';
  const program = await createProgram(sql);
  await sql`
    insert into processor_connections (workspace_id, status, webhook_secret)
    select workspace_id, 'connected', ${secret} from programs where id = ${program.id}`;
  for (const type of ['text/plain', 'application/octet-stream', undefined]) {
    const event = stripeEvent('checkout.session.completed', checkoutSession({}), { livemode: false });
    const payload = `${JSON.stringify(event, null, 2)}\n`;
    const headers: Record<string, string> = { 'stripe-signature': signature(payload, secret) };
    if (type) headers['content-type'] = type;
    const r = await raw(
      'POST',
      `/api/v1/webhooks/processor/${program.id}`,
      headers,
      type ? payload : new TextEncoder().encode(payload),
    );
    t.same(r, { status: 200, body: { received: true } }, type ?? 'no Content-Type');
  }
});
