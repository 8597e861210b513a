// The dashboard's cookie session (docs/dashboard.md "Session and CSRF"): POST/GET/DELETE /api/auth/session,
// POST /api/auth/session/signup, the svc_session cookie accepted on every authenticated route, the
// X-CSRF-Token check on cookie-authenticated writes, and the cookie's attributes.
import t from 'tap';
import { createProgram, postJson, startServices, testSql } from '../helpers/stack.ts';
import { PASSWORD, bearer, getJson, signup } from '../helpers/accounts.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;

interface SessionInfo {
  user: { id: number; email: string; name: string | null };
  workspaces: { id: number; name: string; role: string }[];
  csrf_token: string;
  expires_at: string;
}

/** The `svc_session=…` pair of a Set-Cookie header, and the header itself. */
function cookieOf(headers: Headers): { pair: string; raw: string; token: string } {
  const raw = headers.get('set-cookie') ?? '';
  const pair = raw.split(';')[0]!;
  return { pair, raw, token: pair.slice('svc_session='.length) };
}

async function logIn(email: string, extra: Record<string, string> = {}, base = svc.baseUrl) {
  const r = await postJson(`${base}/api/auth/session`, { email, password: PASSWORD }, extra);
  if (r.status !== 200) throw new Error(`session login failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { info: r.body.data as SessionInfo, ...cookieOf(r.headers) };
}

async function send(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(url(path), {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown>, res };
}

t.test(
  'log in with a cookie: attributes, SessionInfo, a management route and a dashboard read',
  async (t) => {
    const u = await signup(svc);
    const bad = await postJson(url('/api/auth/session'), { email: u.email, password: 'wrong password!' });
    t.equal(bad.status, 401);
    t.same(bad.body, { error: 'Invalid email or password' });
    t.equal(bad.headers.get('set-cookie'), null, 'no cookie on failure');
    t.equal((await postJson(url('/api/auth/session'), { email: u.email })).status, 400);

    const s = await logIn(u.email);
    t.match(s.token, /^sess_/);
    const attrs = s.raw.split(';').map((a) => a.trim());
    for (const a of ['HttpOnly', 'SameSite=Strict', 'Path=/', `Max-Age=${14 * 24 * 3600}`])
      t.ok(attrs.includes(a), a);
    t.notOk(attrs.includes('Secure'), 'not Secure over plain HTTP');
    t.match(s.info, {
      user: { id: u.userId, email: u.email, name: 'Test User' },
      workspaces: [{ id: u.workspaceId, name: 'Test workspace', role: 'owner' }],
      csrf_token: /^[A-Za-z0-9_-]{20,}$/,
    });
    t.ok(Date.parse(s.info.expires_at) > Date.now());
    const [row] =
      await sql`select count(*)::int as n from sessions where token_hash = sha256(${s.token}::bytea) and revoked_at is null`;
    t.equal(row!.n, 1, 'the cookie holds a stored session');

    const cookie = { cookie: s.pair };
    const me = await getJson(url('/api/auth/session'), cookie);
    t.equal(me.status, 200);
    t.same(me.body.data, s.info, 'GET answers the same SessionInfo (same csrf_token)');
    t.equal(
      (await getJson(url('/api/advertiser/affiliate-programs'), cookie)).status,
      200,
      'management read',
    );
    const program = await createProgram(sql, { workspaceId: u.workspaceId });
    const perf = await getJson(url(`/api/tracking/performance/${program.id}`), cookie);
    t.equal(perf.status, 200, 'dashboard read');
    t.equal(
      (await getJson(url(`/api/tracking/performance/${program.id}`), { cookie: 'other=1; svc_session=nope' }))
        .status,
      401,
      'a cookie that is not a session is 401',
    );
    t.equal((await getJson(url('/api/advertiser/affiliate-programs'))).status, 401, 'no cookie, no header');
  },
);

t.test('CSRF: a cookie write needs the X-CSRF-Token of that session; Bearer needs none', async (t) => {
  const u = await signup(svc);
  const other = await signup(svc);
  const s = await logIn(u.email);
  const o = await logIn(other.email);
  const create = { name: 'Cookie program', workspace_id: u.workspaceId };
  const path = '/api/advertiser/affiliate-programs';

  const none = await send('POST', path, { cookie: s.pair }, create);
  t.equal(none.status, 403);
  t.same(none.body, { error: 'CSRF token missing or invalid' });
  const wrong = await send('POST', path, { cookie: s.pair, 'x-csrf-token': o.info.csrf_token }, create);
  t.equal(wrong.status, 403, "another session's token is wrong");
  t.same(wrong.body, { error: 'CSRF token missing or invalid' });
  const garbage = await send('POST', path, { cookie: s.pair, 'x-csrf-token': 'x' }, create);
  t.equal(garbage.status, 403);
  const [n] = await sql`select count(*)::int as n from programs where workspace_id = ${u.workspaceId}`;
  t.equal(n!.n, 0, 'nothing was created by the refused requests');

  const ok = await send('POST', path, { cookie: s.pair, 'x-csrf-token': s.info.csrf_token }, create);
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  const viaBearer = await send('POST', path, bearer(u.session), { ...create, name: 'Bearer program' });
  t.equal(viaBearer.status, 201, 'Bearer needs no CSRF token');
  const both = await send(
    'POST',
    path,
    { ...bearer(u.session), cookie: 'svc_session=sess_garbage' },
    {
      ...create,
      name: 'Header wins',
    },
  );
  t.equal(both.status, 201, 'the Authorization header wins over the cookie');
});

t.test('sign up with a cookie; log out revokes and clears it', async (t) => {
  const email = `cookie-${Date.now()}@example.com`;
  const r = await postJson(url('/api/auth/session/signup'), {
    email,
    password: PASSWORD,
    name: 'Cookie',
    workspace_name: 'Cookie Co',
  });
  t.equal(r.status, 201);
  const info = r.body.data as SessionInfo;
  t.match(info, { user: { email, name: 'Cookie' }, workspaces: [{ name: 'Cookie Co', role: 'owner' }] });
  const c = cookieOf(r.headers);
  t.match(c.raw, /HttpOnly/);
  const dup = await postJson(url('/api/auth/session/signup'), { email, password: PASSWORD });
  t.equal(dup.status, 409);
  t.same(dup.body, { error: 'A user with this email already exists' });
  t.same((await postJson(url('/api/auth/session/signup'), { email: 'x@y.co', password: 'short' })).body, {
    error: 'password must be at least 10 characters',
  });

  const cookie = { cookie: c.pair };
  t.equal((await send('DELETE', '/api/auth/session', cookie)).status, 403, 'logout needs the CSRF token');
  t.equal((await getJson(url('/api/auth/session'), cookie)).status, 200, 'still logged in');
  const out = await send('DELETE', '/api/auth/session', { ...cookie, 'x-csrf-token': info.csrf_token });
  t.equal(out.status, 204);
  const cleared = out.res.headers.get('set-cookie') ?? '';
  t.match(cleared, /^svc_session=;/);
  t.match(cleared, /Max-Age=0/);
  const gone = await getJson(url('/api/auth/session'), cookie);
  t.same([gone.status, gone.body], [200, { data: null }], 'the session is revoked: no session');
  t.equal((await getJson(url('/api/advertiser/affiliate-programs'), cookie)).status, 401);
});

t.test("another user's revoked session in the cookie is 401; GET with an API key is 401", async (t) => {
  const victim = await signup(svc);
  const s = await logIn(victim.email);
  await sql`update sessions set revoked_at = now() where token_hash = sha256(${s.token}::bytea)`;
  const attacker = await signup(svc);
  const read = await getJson(url('/api/advertiser/affiliate-programs'), { cookie: s.pair });
  t.equal(read.status, 401);
  t.same(read.body, { error: 'Invalid or expired session' });
  const r = await send(
    'POST',
    '/api/advertiser/affiliate-programs',
    {
      cookie: s.pair,
      'x-csrf-token': s.info.csrf_token,
    },
    { name: 'x', workspace_id: attacker.workspaceId },
  );
  t.equal(r.status, 401);
  t.equal((await getJson(url('/api/auth/session'), bearer(victim.session))).status, 200, 'Bearer GET works');
  t.equal((await getJson(url('/api/auth/session'), bearer('affk_nothing'))).status, 401);
});

t.test(
  'GET /api/auth/session: no session is an answer (200 null), a wrong Bearer credential an error',
  async (t) => {
    const u = await signup(svc);
    const s = await logIn(u.email);
    const none = await getJson(url('/api/auth/session'));
    t.same([none.status, none.body], [200, { data: null }], 'no cookie, no header: no session');
    await sql`update sessions set revoked_at = now() where token_hash = sha256(${s.token}::bytea)`;
    const res = await fetch(url('/api/auth/session'), { headers: { cookie: s.pair } });
    t.same([res.status, await res.json()], [200, { data: null }], 'a dead cookie: no session');
    t.match(res.headers.get('set-cookie') ?? '', /^svc_session=;.*Max-Age=0/, 'and the cookie is cleared');
    const junk = await getJson(url('/api/auth/session'), { cookie: 'svc_session=nope' });
    t.same([junk.status, junk.body], [200, { data: null }], 'a cookie that is no session: no session');
    for (const [header, error] of [
      [bearer(s.token), 'Invalid or expired session'],
      [bearer('sess_nothing'), 'Invalid or expired session'],
      [bearer(u.session.replace('sess_', 'affk_')), 'This needs a dashboard session'],
      [{ authorization: 'Basic x' }, 'Authorization must be "Bearer <credential>"'],
    ] as const) {
      const r = await getJson(url('/api/auth/session'), header);
      t.same([r.status, r.body], [401, { error }], header.authorization);
    }
  },
);

t.test('Secure over HTTPS behind a trusted proxy only', async (t) => {
  const u = await signup(svc);
  const https = await logIn(u.email, { 'x-forwarded-proto': 'https' });
  t.ok(
    https.raw
      .split(';')
      .map((a) => a.trim())
      .includes('Secure'),
    'Secure (loopback proxy trusted)',
  );
  const untrusted = await startServices(t, ['web'], { TRUST_PROXY: 'false' });
  const plain = await logIn(u.email, { 'x-forwarded-proto': 'https' }, untrusted.baseUrl);
  t.notOk(plain.raw.includes('Secure'), 'an untrusted X-Forwarded-Proto does not make it Secure');
});

t.test('the session routes and the cookie scheme are in the OpenAPI document', async (t) => {
  const doc = (await getJson(url('/api/v1/openapi.json'))).body as {
    paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
    components: { securitySchemes: Record<string, unknown> };
  };
  t.match(doc.components.securitySchemes.sessionCookie, {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_session',
  });
  t.ok(doc.paths['/api/auth/session']?.post?.responses['200'], 'POST /api/auth/session');
  t.ok(doc.paths['/api/auth/session/signup']?.post?.responses['201'], 'POST /api/auth/session/signup');
  t.ok(doc.paths['/api/auth/session']?.get, 'GET /api/auth/session');
  t.ok(
    doc.paths['/api/auth/session']?.delete?.responses['403'],
    'DELETE /api/auth/session documents the 403',
  );
  t.same(doc.paths['/api/advertiser/affiliate-programs']?.get?.security, [
    { session: [] },
    { sessionCookie: [] },
    { apiKey: [] },
  ]);
  t.same((await postJson(url('/api/auth/session'), {})).body, { error: 'email and password are required' });
});
