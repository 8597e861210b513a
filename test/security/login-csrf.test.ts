// Attack: login CSRF and cross-site writes (issue 28; docs/security.md "Cross-site requests and tokens in
// links"). A page on another site posts an HTML form (text/plain or urlencoded: no preflight) to a sign-in
// route, and the victim's browser is signed in to the attacker's account (and the answer sets the session
// cookie); or a sibling site posts a write that carries the victim's session cookie. Every such request is
// refused before it signs anyone in or changes anything: a body that is not JSON is 415, a sign-in or a
// cookie-authenticated write from another origin (Origin, or Sec-Fetch-Site: cross-site) is 403. Bearer
// calls, which no browser sends on its own, are not concerned.
import t from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { PASSWORD, bearer, getJson, signup } from '../helpers/accounts.ts';
import { PARTNER_PASSWORD, addPartner, apiProgram, magicTokenOf, tokenOf } from '../helpers/partners.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;

const NOT_JSON = { error: 'Content-Type must be application/json' };
const CROSS_SITE = { error: 'Cross-site request refused' };
const EVIL = 'https://evil.example';

interface Answer {
  status: number;
  body: Record<string, unknown> | null;
  setCookie: string | null;
}

/** A raw request: the body exactly as given, with exactly these headers (no content type added). */
async function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  base = svc.baseUrl,
): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed, setCookie: res.headers.get('set-cookie') };
}

/** What a cross-site `<form enctype="text/plain">` sends: `name=value`, here shaped to be JSON. */
const formJson = (o: Record<string, unknown>) => JSON.stringify(o);
const TEXT = { 'content-type': 'text/plain' };
const JSON_CT = { 'content-type': 'application/json' };

const owner = await signup(svc);
const program = await apiProgram(svc, owner);

/** The number of live sessions of the dashboard user and of the partner account of `email`. */
async function sessions(userId: number): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from sessions where user_id = ${userId} and revoked_at is null`;
  return r!.n;
}
async function partnerSessions(email: string): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from partner_sessions s join partner_accounts a on a.id = s.account_id
    where lower(a.email) = ${email.toLowerCase()} and s.revoked_at is null`;
  return r?.n ?? 0;
}

t.test('dashboard sign-in: a text/plain form is 415 and signs nobody in', async (t) => {
  const before = await sessions(owner.userId);
  const creds = formJson({ email: owner.email, password: PASSWORD });
  for (const path of ['/api/auth/session', '/api/auth/login']) {
    for (const ct of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
      const r = await raw('POST', path, { 'content-type': ct }, creds);
      t.same([r.status, r.body], [415, NOT_JSON], `${path} ${ct}`);
      t.equal(r.setCookie, null, `${path} ${ct}: no cookie`);
    }
    // Cross-site, as the browser sends it: Origin of the attacker's page.
    const form = await raw('POST', path, { ...TEXT, origin: EVIL }, creds);
    t.equal(form.status, path === '/api/auth/session' ? 403 : 415, `${path}: from another site`);
    t.equal(form.setCookie, null);
  }
  t.equal(await sessions(owner.userId), before, 'no session was made');
});

t.test('dashboard sign-in from another origin is 403, even with a JSON body', async (t) => {
  const before = await sessions(owner.userId);
  const body = JSON.stringify({ email: owner.email, password: PASSWORD });
  const cases: [string, Record<string, string>][] = [
    ['Origin of another site', { origin: EVIL }],
    ['Sec-Fetch-Site: cross-site, no Origin', { 'sec-fetch-site': 'cross-site' }],
    ['a sibling origin (same site)', { origin: 'http://localhost:1', 'sec-fetch-site': 'same-site' }],
    ['Origin: null (a sandboxed frame)', { origin: 'null' }],
  ];
  for (const path of ['/api/auth/session', '/api/auth/session/signup']) {
    for (const [what, headers] of cases) {
      const r = await raw('POST', path, { ...JSON_CT, ...headers }, body);
      t.same([r.status, r.body], [403, CROSS_SITE], `${path}: ${what}`);
      t.equal(r.setCookie, null);
    }
  }
  t.equal(await sessions(owner.userId), before, 'no session was made');
  // The service's own origin, as the dashboard sends it.
  const own = await raw(
    'POST',
    '/api/auth/session',
    { ...JSON_CT, origin: svc.baseUrl, 'sec-fetch-site': 'same-origin' },
    body,
  );
  t.equal(own.status, 200, 'the dashboard itself signs in');
  t.match(own.setCookie, /^svc_session=sess_/);
});

t.test('partner cookie sign-in: text/plain is 415, another origin 403; nothing spent', async (t) => {
  const added = await addPartner(svc, owner, program.id);
  const invite = tokenOf(added.inviteUrl!);
  // Accepting the invite: the account is created and signed in by the answer's cookie.
  const path = '/api/partner/auth/session/accept-invite';
  const b = { token: invite, password: PARTNER_PASSWORD };
  const plainInvite = await raw('POST', path, TEXT, formJson(b));
  t.same([plainInvite.status, plainInvite.body], [415, NOT_JSON], 'invite: text/plain');
  const crossInvite = await raw('POST', path, { ...JSON_CT, origin: EVIL }, JSON.stringify(b));
  t.same([crossInvite.status, crossInvite.body], [403, CROSS_SITE], 'invite: another origin');
  const fetchSite = await raw(
    'POST',
    path,
    { ...JSON_CT, 'sec-fetch-site': 'cross-site' },
    JSON.stringify(b),
  );
  t.same([fetchSite.status, fetchSite.body], [403, CROSS_SITE], 'invite: Sec-Fetch-Site');
  t.equal(plainInvite.setCookie ?? crossInvite.setCookie ?? fetchSite.setCookie, null, 'no cookie');
  t.equal(await partnerSessions(added.email), 0, 'the invite made no session');

  // The invite is still good: accepted from the portal's own origin.
  const ok = await raw(
    'POST',
    '/api/partner/auth/session/accept-invite',
    { ...JSON_CT, origin: svc.baseUrl },
    JSON.stringify({ token: invite, password: PARTNER_PASSWORD }),
  );
  t.equal(ok.status, 200, 'the invite was not spent');
  t.match(ok.setCookie, /^svc_partner_session=psess_/);

  // Password sign-in.
  const creds = { email: added.email, password: PARTNER_PASSWORD };
  const plain = await raw('POST', '/api/partner/auth/session', TEXT, formJson(creds));
  t.same([plain.status, plain.body], [415, NOT_JSON], 'password sign-in: text/plain');
  const cross = await raw(
    'POST',
    '/api/partner/auth/session',
    { ...JSON_CT, origin: EVIL },
    JSON.stringify(creds),
  );
  t.same([cross.status, cross.body], [403, CROSS_SITE], 'password sign-in: another origin');
  t.equal(plain.setCookie ?? cross.setCookie, null);

  // A magic link, asked for with a JSON body, followed by a cross-site form: refused, not spent.
  const asked = await postJson(url('/api/partner/auth/magic-link'), { email: added.email });
  t.equal(asked.status, 202);
  const magic = (await magicTokenOf(sql, svc.prefix, added.email))!;
  const before = await partnerSessions(added.email);
  const mPlain = await raw('POST', '/api/partner/auth/session/magic-link', TEXT, formJson({ token: magic }));
  t.same([mPlain.status, mPlain.body], [415, NOT_JSON], 'magic link: text/plain');
  const mCross = await raw(
    'POST',
    '/api/partner/auth/session/magic-link',
    { ...JSON_CT, origin: EVIL },
    JSON.stringify({ token: magic }),
  );
  t.same([mCross.status, mCross.body], [403, CROSS_SITE], 'magic link: another origin');
  t.equal(await partnerSessions(added.email), before, 'no session');
  const mOk = await raw(
    'POST',
    '/api/partner/auth/session/magic-link',
    { ...JSON_CT, origin: svc.baseUrl },
    JSON.stringify({ token: magic }),
  );
  t.equal(mOk.status, 200, 'the link was not spent');
});

t.test('a cookie-authenticated write from another origin is 403, with a good CSRF token', async (t) => {
  const login = await raw(
    'POST',
    '/api/auth/session',
    JSON_CT,
    JSON.stringify({ email: owner.email, password: PASSWORD }),
  );
  const cookie = login.setCookie!.split(';')[0]!;
  const csrf = (login.body!.data as { csrf_token: string }).csrf_token;
  const write = (headers: Record<string, string>, name: string) =>
    raw(
      'POST',
      `/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`,
      { ...JSON_CT, ...headers },
      JSON.stringify({ name }),
    );
  const names = async () =>
    (await sql<{ name: string }[]>`select name from programs where workspace_id = ${owner.workspaceId}`).map(
      (r) => r.name,
    );

  const withCookie = { cookie, 'x-csrf-token': csrf };
  const evil = await write({ ...withCookie, origin: EVIL }, 'evil 1');
  t.same([evil.status, evil.body], [403, CROSS_SITE], 'Origin of another site');
  t.same(
    (await write({ ...withCookie, 'sec-fetch-site': 'cross-site' }, 'evil 2')).body,
    CROSS_SITE,
    'Sec-Fetch-Site: cross-site',
  );
  t.same(
    (await write({ ...withCookie, origin: 'http://localhost:1', 'sec-fetch-site': 'same-site' }, 'evil 3'))
      .body,
    CROSS_SITE,
    'a sibling origin',
  );
  const logout = await raw('DELETE', '/api/auth/session', { ...withCookie, origin: EVIL });
  t.same([logout.status, logout.body], [403, CROSS_SITE], 'a cross-site log-out too');
  t.notOk(
    (await names()).some((n) => n.startsWith('evil')),
    'nothing was made',
  );

  const same = await write({ ...withCookie, origin: svc.baseUrl, 'sec-fetch-site': 'same-origin' }, 'own 1');
  t.equal(same.status, 201, 'the dashboard itself (same origin)');
  const noOrigin = await write(withCookie, 'own 2');
  t.equal(noOrigin.status, 201, 'no Origin at all (not a browser): the CSRF token decides');

  // Bearer calls are not the browser's: another Origin changes nothing.
  const key = await write({ ...bearer(owner.session), origin: EVIL, 'sec-fetch-site': 'cross-site' }, 'b 1');
  t.equal(key.status, 201, 'Bearer with another Origin');
  t.same((await names()).filter((n) => !n.startsWith('Program')).sort(), ['b 1', 'own 1', 'own 2']);
  // Reads are not writes.
  const read = await getJson(url(`/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`), {
    cookie,
    origin: EVIL,
  });
  t.equal(read.status, 200, 'a read with the cookie and another Origin');
});

t.test('a partner cookie write from another origin is 403; Bearer is unaffected', async (t) => {
  const added = await addPartner(svc, owner, program.id);
  const signIn = await raw(
    'POST',
    '/api/partner/auth/session/accept-invite',
    JSON_CT,
    JSON.stringify({ token: tokenOf(added.inviteUrl!), password: PARTNER_PASSWORD }),
  );
  t.equal(signIn.status, 200);
  const cookie = signIn.setCookie!.split(';')[0]!;
  const csrf = (signIn.body!.data as { csrf_token: string }).csrf_token;
  const body = JSON.stringify({ type: 'paypal', email: added.email });
  const cross = await raw(
    'PUT',
    '/api/partner/payout-method',
    {
      ...JSON_CT,
      cookie,
      'x-csrf-token': csrf,
      origin: EVIL,
    },
    body,
  );
  t.same([cross.status, cross.body], [403, CROSS_SITE]);
  const [m] = await sql<{ payout_method: unknown }[]>`
    select payout_method from partner_accounts where lower(email) = ${added.email.toLowerCase()}`;
  t.equal(m!.payout_method, null, 'no payout method was stored');
  const own = await raw(
    'PUT',
    '/api/partner/payout-method',
    { ...JSON_CT, cookie, 'x-csrf-token': csrf, origin: svc.baseUrl },
    body,
  );
  t.equal(own.status, 200, 'from the portal itself');

  const login = await postJson(url('/api/partner/auth/login'), {
    email: added.email,
    password: PARTNER_PASSWORD,
  });
  const psess = (login.body.data as { session_token: string }).session_token;
  const viaBearer = await raw(
    'PUT',
    '/api/partner/payout-method',
    { ...JSON_CT, ...bearer(psess), origin: EVIL, 'sec-fetch-site': 'cross-site' },
    body,
  );
  t.equal(viaBearer.status, 200, 'Bearer with another Origin');
});

t.test('with PUBLIC_URL set, its origin is the only one', async (t) => {
  const pub = await startServices(t, ['web'], { PUBLIC_URL: 'https://svc.example/' });
  const body = JSON.stringify({ email: owner.email, password: PASSWORD });
  const at = (origin: string) => raw('POST', '/api/auth/session', { ...JSON_CT, origin }, body, pub.baseUrl);
  t.equal((await at('https://svc.example')).status, 200, "PUBLIC_URL's origin");
  t.equal((await at('HTTPS://SVC.EXAMPLE:443')).status, 200, 'the same origin, spelled otherwise');
  t.same((await at(pub.baseUrl)).body, CROSS_SITE, "the request's own host is not PUBLIC_URL's");
  t.same((await at('http://svc.example')).body, CROSS_SITE, 'another scheme');
  t.same((await at('https://svc.example.evil.example')).body, CROSS_SITE, 'a longer host');
});
