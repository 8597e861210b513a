// ARCHITECTURE invariant 13, tried as an attacker would, route by route: a partner's session reaches only
// the records its account claimed; no other credential reaches partner routes; a partner session reaches no
// other route; a cookie write without its CSRF token is refused; a partner never sees a customer's key or
// email; and bad input is a 4xx with an `error` string, never a 5xx.
//
// The routes are enumerated from the Fastify route table (an onRoute hook while the ingress and API plugins
// register, exactly as services/web/app.ts registers them), so a route added later is covered without
// editing this file, or fails it until it is classified below.
import t from 'tap';
import Fastify from 'fastify';
import type { RouteOptions } from 'fastify';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { PASSWORD, bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, invitedPartner, PARTNER_PASSWORD } from '../helpers/partners.ts';
import { apiPlugin } from '../../services/api/app.ts';
import { ingressPlugin } from '../../services/ingress/app.ts';
import type { ApiDeps } from '../../services/api/deps.ts';
import type { IngressDeps } from '../../services/ingress/deps.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';

// ---- the route table ----
const table: { method: string; url: string }[] = [];
{
  const app = Fastify();
  app.addHook('onRoute', (r: RouteOptions) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') table.push({ method, url: r.url });
  });
  const none = null as never;
  const ingress = {
    sql: none,
    cache: none,
    producer: none,
    snowflake: none,
    waiter: none,
    liveness: none,
    topics: { clicks: 'c', sales: 's', refunds: 'r', processorEvents: 'p' },
    commandDeadlineMs: 1,
    rateLimiter: none,
  } satisfies IngressDeps;
  const api = { sql: none, sessionTtlHours: 1, kafkaPrefix: 'x.', publicUrl: 'http://x' } satisfies ApiDeps;
  await app.register(ingressPlugin, ingress);
  await app.register(apiPlugin, api);
  await app.ready();
  await app.close();
}
const isPartner = (r: { url: string }) => r.url.startsWith('/api/partner/');
const partnerRoutes = table.filter(isPartner);
/** Partner routes that need no session (they create one); every other partner route needs one. */
const SIGN_IN = new Set([
  'POST /api/partner/auth/login',
  'POST /api/partner/auth/session',
  'POST /api/partner/auth/magic-link',
  'POST /api/partner/auth/magic-link/verify',
  'POST /api/partner/auth/session/magic-link',
  'POST /api/partner/auth/accept-invite',
  'POST /api/partner/auth/session/accept-invite',
]);
/** Routes outside /api/partner that take no credential at all (a psess_ there is simply irrelevant). */
const NO_CREDENTIAL = new Set([
  'POST /api/v1/track/click',
  'POST /api/tracking/click',
  'OPTIONS /api/v1/track/click',
  'OPTIONS /api/tracking/click',
  'OPTIONS /api/v1/track/lead',
  'OPTIONS /api/tracking/lead',
  'GET /js/svc-tracker.js',
  'POST /api/v1/webhooks/processor/:programId',
  'POST /api/v1/webhooks/:processor/:programId',
  'POST /api/auth/signup',
  'POST /api/auth/login',
  'POST /api/auth/session',
  'POST /api/auth/session/signup',
]);
const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
const authed = partnerRoutes.filter((r) => !SIGN_IN.has(key(r)));
const others = table.filter(
  (r) => !isPartner(r) && !r.url.startsWith('/api/public/') && !NO_CREDENTIAL.has(key(r)),
);

// ---- the world: partner A in program PA (workspace WA), partner B in PB (WB) ----
const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker'], {
  AUTH_RATE_LIMIT_PER_MINUTE: '0',
});
const url = (p: string) => `${svc.baseUrl}${p}`;
const ownerA = await signup(svc);
const ownerB = await signup(svc);
const PA = await apiProgram(svc, ownerA);
const PB = await apiProgram(svc, ownerB);
const A = await invitedPartner(svc, ownerA, PA.id);
const B = await invitedPartner(svc, ownerB, PB.id);
const linkA = (
  await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${PA.id}/partners/${A.partnerId}/links`),
    {},
    bearer(ownerA.session),
  )
).body.data as { id: number; short_link: string };
// A's customer, with a key and an email: none of it may ever reach a partner.
const customerKey = `secret-key-${randomBytes(4).toString('hex')}`;
const customerEmail = `${customerKey}@customer.example`;
const click = await postJson(url('/api/v1/track/click'), {
  affiliate_url: `https://s.example/?aff=${linkA.short_link}`,
});
const lead = await postJson(
  url('/api/v1/track/lead'),
  { click_id: click.body.click_id, customer_key: customerKey, email: customerEmail },
  bearer(PA.token),
);
if (lead.status !== 200) throw new Error(`lead: ${lead.status} ${JSON.stringify(lead.body)}`);
const sale = await postJson(
  url('/api/v1/track/sale'),
  { transaction_id: `iso-${randomBytes(4).toString('hex')}`, amount_cents: 5000, customer_key: customerKey },
  bearer(PA.token),
);
if (sale.status !== 200) throw new Error(`sale: ${sale.status} ${JSON.stringify(sale.body)}`);
await sql`update customers set email = ${customerEmail} where customer_key = ${customerKey}`;
const [note] = await sql<{ id: string }[]>`
  insert into notifications (notification_key, recipient_type, partner_id, program_id, kind, title, body)
  values (${`iso:${A.partnerId}`}, 'partner', ${A.partnerId}, ${PA.id}, 'test', 'For A', 'Only A') returning id`;
await waitFor('the partner rollup', async () => {
  const [r] = await sql<{ n: number }[]>`
    select coalesce(sum(clicks + leads + sales), 0)::int as n from program_daily_breakdown
    where program_id = ${PA.id} and dimension = 'partner' and key = ${String(A.partnerId)}`;
  return r!.n === 3;
});

// A's invitations: two records other workspaces made with A's email (one to accept, one to decline). A's
// mailbox counts as verified, as if A had followed a sign-in link before accepting its invite: invitations
// are shown only then (partner-claims/service.ts).
await sql`update partner_accounts set mailbox_verified_at = now() where id = ${A.accountId}`;
const invitationFor = async () => {
  const owner = await signup(svc);
  const program = await apiProgram(svc, owner);
  return (await addPartner(svc, owner, program.id, { email: A.email })).partnerId;
};
const [toAccept, toDecline] = [await invitationFor(), await invitationFor()];

/** A's ids for a route's path parameters; an unknown parameter fails the test until it is added here. */
const aParams: Record<string, string | ((path: string) => string)> = {
  programId: String(PA.id),
  id: note!.id,
  partnerId: (path) => String(path.endsWith('/decline') ? toDecline : toAccept),
};
function fill(path: string, params: Record<string, string | ((path: string) => string)>): string {
  // A parameter may carry its own pattern (`:importId(^\\d+)`): the value replaces both.
  return path.replace(/:([A-Za-z]+)(\([^()]*\))?/g, (_m, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`${path}: no value for :${name}; add it to the test`);
    return typeof v === 'function' ? v(path) : v;
  });
}
/** Dummy values for the path parameters of non-partner routes (any id: the credential is refused first). */
const anyParams = new Proxy({} as Record<string, string>, { get: () => '1' });
const body = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : {});

/** One request; `body` is JSON-encoded (none for GET and DELETE). */
async function call(method: string, path: string, headers: Record<string, string>) {
  const b = body(method);
  const res = await fetch(url(path), {
    method,
    headers: b === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: b === undefined ? undefined : JSON.stringify(b),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed, text };
}

t.test('the route table has the partner routes of the contract', async (t) => {
  for (const r of [
    'GET /api/partner/me',
    'GET /api/partner/programs',
    'GET /api/partner/programs/:programId/links',
    'POST /api/partner/programs/:programId/links',
    'GET /api/partner/programs/:programId/performance',
    'GET /api/partner/programs/:programId/events',
    'GET /api/partner/commissions',
    'GET /api/partner/payouts',
    'GET /api/partner/payout-method',
    'PUT /api/partner/payout-method',
    'GET /api/partner/invitations',
    'POST /api/partner/invitations/:partnerId/accept',
    'POST /api/partner/invitations/:partnerId/decline',
    'GET /api/partner/notifications',
    'POST /api/partner/notifications/:id/read',
    'POST /api/partner/notifications/read-all',
    'POST /api/partner/auth/logout',
    'GET /api/partner/auth/session',
    'DELETE /api/partner/auth/session',
    ...SIGN_IN,
  ]) {
    t.ok(
      table.some((x) => key(x) === r),
      r,
    );
  }
  t.ok(others.length > 30, `${others.length} credentialed routes outside /api/partner`);
});

t.test("partner B with partner A's ids: 404 on every partner route that takes an id", async (t) => {
  const withIds = authed.filter((r) => r.url.includes(':'));
  t.ok(withIds.length >= 5, `${withIds.length} partner routes with ids`);
  for (const r of withIds) {
    const path = fill(r.url, aParams);
    const asB = await call(r.method, path, bearer(B.session));
    t.equal(asB.status, 404, `B: ${r.method} ${path}`);
    t.type(asB.body.error, 'string');
    // The same route with A's own session is not a 404: the ids are real.
    const asA = await call(r.method, path, bearer(A.session));
    t.not(asA.status, 404, `A: ${r.method} ${path} (${asA.status} ${asA.text.slice(0, 80)})`);
  }
  const q = await getJson(url(`/api/partner/commissions?program_id=${PA.id}`), bearer(B.session));
  t.equal(q.status, 404, "B filtering commissions by A's program");
});

t.test("partner B's lists and reads never show A's records", async (t) => {
  const markers = [A.email, String(PA.slug), linkA.short_link, 'Only A'];
  for (const r of authed.filter((x) => x.method === 'GET' && !x.url.includes(':'))) {
    const res = await getJson(url(r.url), bearer(B.session));
    t.equal(res.status, 200, `B: GET ${r.url}`);
    for (const m of markers) t.notOk(res.text.includes(m), `GET ${r.url} does not mention ${m}`);
  }
});

t.test('advertiser credentials on every partner route: 401; the sign-in routes ignore them', async (t) => {
  const key_ = generateSecret('affk_');
  await sql`insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked)
            values (${ownerA.workspaceId}, ${ownerA.userId}, 'iso', 'affk_', ${hashSecret(key_)}, ${maskSecret(key_)})`;
  const creds: [string, Record<string, string>][] = [
    ['sess_', bearer(ownerA.session)],
    ['affk_', bearer(key_)],
    ['aff_', bearer(PA.token)],
    ['garbage', bearer('nonsense')],
    ['Basic', { authorization: 'Basic YTpi' }],
  ];
  for (const r of partnerRoutes) {
    const path = fill(r.url, aParams);
    // A sign-in route is public: a credential of another kind is ignored (answered as without one).
    const bare = SIGN_IN.has(key(r)) ? await call(r.method, path, {}) : null;
    for (const [name, headers] of creds) {
      const res = await call(r.method, path, headers);
      if (bare) {
        t.not(res.status, 401, `${name} ignored: ${r.method} ${path}`);
        t.equal(res.status, bare.status, `${name}: ${r.method} ${path} as without it (${bare.status})`);
      } else t.equal(res.status, 401, `${name}: ${r.method} ${path}`);
    }
  }
  // The dashboard's cookie (a browser sends it along by itself) on every route that needs a partner session.
  const dash = await fetch(url('/api/auth/session'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ownerA.email, password: PASSWORD }),
  });
  const dashCookie = { cookie: dash.headers.get('set-cookie')!.split(';')[0]! };
  for (const r of authed) {
    const res = await call(r.method, fill(r.url, aParams), dashCookie);
    t.equal(res.status, 401, `dashboard cookie: ${r.method} ${r.url}`);
  }
});

t.test('a partner session on every advertiser, dashboard and tracking route: 401', async (t) => {
  const cookie = await partnerCookie();
  for (const r of others) {
    const path = fill(r.url, anyParams);
    const res = await call(r.method, path, bearer(A.session));
    t.equal(res.status, 401, `psess_ bearer: ${r.method} ${path} (${res.text.slice(0, 80)})`);
    // The partner cookie grants nothing: the answer is the one without any credential (401 everywhere
    // but a browser-mode lead, which needs none).
    const none = await call(r.method, path, {});
    const viaCookie = await call(r.method, path, { cookie: cookie.cookie });
    t.same(
      [viaCookie.status, viaCookie.body],
      [none.status, none.body],
      `partner cookie: ${r.method} ${path}`,
    );
  }
});

async function partnerCookie() {
  const res = await fetch(url('/api/partner/auth/session'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: A.email, password: PARTNER_PASSWORD }),
  });
  const data = ((await res.json()) as { data: { csrf_token: string } }).data;
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrf: data.csrf_token };
}

t.test(
  'a cookie write without its CSRF token: 403 on every partner route that changes something',
  async (t) => {
    const c = await partnerCookie();
    const writes = authed.filter((r) => r.method !== 'GET');
    t.ok(writes.length >= 6);
    for (const r of writes) {
      const path = fill(r.url, aParams);
      const res = await call(r.method, path, { cookie: c.cookie });
      t.same(
        [res.status, res.body],
        [403, { error: 'CSRF token missing or invalid' }],
        `${r.method} ${path}`,
      );
    }
    // With the token the same cookie passes the check (whatever the route then answers).
    const ok = await call('POST', '/api/partner/notifications/read-all', {
      cookie: c.cookie,
      'x-csrf-token': c.csrf,
    });
    t.equal(ok.status, 200);
  },
);

t.test("a partner never sees a customer's key or email: every partner read", async (t) => {
  for (const r of authed.filter((x) => x.method === 'GET')) {
    const path = fill(r.url, aParams);
    for (const q of ['', '?pageSize=100', '?eventType=lead&pageSize=100', '?period=all']) {
      const res = await getJson(url(path + q), bearer(A.session));
      if (res.status !== 200) continue;
      t.notOk(res.text.includes(customerKey), `GET ${path}${q}: no customer key`);
      t.notOk(res.text.includes(customerEmail), `GET ${path}${q}: no customer email`);
      t.notOk(res.text.includes('customer_key'), `GET ${path}${q}: no customer_key field`);
    }
  }
  const events = await getJson(url(`/api/partner/programs/${PA.id}/events?pageSize=100`), bearer(A.session));
  t.same(
    (events.body.data as { event_type: string }[]).map((e) => e.event_type).sort(),
    ['click', 'conversion', 'lead'],
    "A's events are there, just without the customer's data",
  );
});

t.test('bad input on every partner and public route: a 4xx with an error string, never a 5xx', async (t) => {
  const c = await partnerCookie();
  const routes = [
    ...authed,
    ...table.filter((r) => r.url.startsWith('/api/public/')),
    ...partnerRoutes.filter((r) => SIGN_IN.has(key(r))),
  ];
  const badQuery =
    '?page=x&pageSize=-1&program_id=a&status=nope&unread=maybe&period=zz&linkId=q&dateFrom=no&eventType=z';
  const params = { ...aParams, slug: PA.slug };
  for (const r of routes) {
    const path = fill(r.url, params);
    const headers = { cookie: c.cookie, 'x-csrf-token': c.csrf, 'x-forwarded-for': '192.0.2.9' };
    const attempts: [string, string | undefined][] =
      r.method === 'GET'
        ? [[path + badQuery, undefined]]
        : [
            [path, '{bad'],
            [path, '[1]'],
            [path, '"text"'],
            [
              path,
              JSON.stringify({
                token: 5,
                email: 7,
                password: [],
                name: {},
                type: 1,
                short_link: '??',
                reason: 9,
              }),
            ],
            [path + badQuery, '{}'],
          ];
    for (const [p, b] of attempts) {
      const res = await fetch(url(p), {
        method: r.method,
        headers: b === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: b,
      });
      const text = await res.text();
      t.ok(res.status < 500, `${r.method} ${p.slice(0, 60)} ${b?.slice(0, 20) ?? ''}: ${res.status}`);
      if (res.status >= 400) {
        const parsed = JSON.parse(text) as { error?: unknown };
        t.type(parsed.error, 'string', `${r.method} ${p.slice(0, 50)}: ${text.slice(0, 80)}`);
      }
    }
  }
});
