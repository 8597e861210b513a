// Dashboard sessions: signup, login, logout; bearer kinds told apart by prefix; Argon2id-hashed passwords.
import t from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { PASSWORD, bearer, getJson, signup } from '../helpers/accounts.ts';
import { CURRENT_HASH } from '../helpers/passwords.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;

t.test('signup creates the user, an owned workspace and a session', async (t) => {
  const email = `Mixed.Case-${Date.now()}@Example.com`;
  const r = await postJson(url('/api/auth/signup'), {
    email,
    password: PASSWORD,
    name: 'Ada',
    workspace_name: 'Ada Inc',
  });
  t.equal(r.status, 201);
  const data = r.body.data as {
    user: { id: number; email: string; name: string };
    workspace: { id: number; name: string };
    session_token: string;
  };
  t.match(data, {
    user: { id: Number, email, name: 'Ada' },
    workspace: { id: Number, name: 'Ada Inc' },
    session_token: /^sess_/,
  });
  const [m] =
    await sql`select role, status from memberships where user_id = ${data.user.id} and workspace_id = ${data.workspace.id}`;
  t.same(m, { role: 'owner', status: 'active' });
  const [u] = await sql`select password_hash from users where id = ${data.user.id}`;
  t.match(u!.password_hash, CURRENT_HASH, 'Argon2id with the current parameters, not the password');
  const [s] =
    await sql`select count(*)::int as n from sessions where token_hash = sha256(${data.session_token}::bytea)`;
  t.equal(s!.n, 1, 'the session is stored as its SHA-256');
  const dup = await postJson(url('/api/auth/signup'), { email: email.toLowerCase(), password: PASSWORD });
  t.equal(dup.status, 409, 'an existing email (case-insensitive) is 409');
  t.type(dup.body.error, 'string');
});

t.test('signup validation', async (t) => {
  t.same((await postJson(url('/api/auth/signup'), { email: 'a@b.co', password: 'short' })).body, {
    error: 'password must be at least 10 characters',
  });
  t.same((await postJson(url('/api/auth/signup'), { email: 'nope', password: PASSWORD })).body, {
    error: 'email must be a valid email address',
  });
  t.equal((await postJson(url('/api/auth/signup'), '{bad')).status, 400);
});

t.test('login, logout: the token is dead at once', async (t) => {
  const u = await signup(svc);
  const bad = await postJson(url('/api/auth/login'), { email: u.email, password: 'wrong password!' });
  t.equal(bad.status, 401);
  t.same(bad.body, { error: 'Invalid email or password' });
  const unknown = await postJson(url('/api/auth/login'), { email: 'nobody@example.com', password: PASSWORD });
  t.same(unknown.body, { error: 'Invalid email or password' }, 'same answer for an unknown email');
  const ok = await postJson(url('/api/auth/login'), { email: u.email.toUpperCase(), password: PASSWORD });
  t.equal(ok.status, 200);
  const { session_token, expires_at } = ok.body.data as { session_token: string; expires_at: string };
  t.match(session_token, /^sess_/);
  t.ok(Date.parse(expires_at) > Date.now());
  t.equal((await getJson(url('/api/advertiser/affiliate-programs'), bearer(session_token))).status, 200);
  const out = await fetch(url('/api/auth/logout'), { method: 'POST', headers: bearer(session_token) });
  t.equal(out.status, 204);
  t.equal((await getJson(url('/api/advertiser/affiliate-programs'), bearer(session_token))).status, 401);
  await sql`update sessions set expires_at = now() - interval '1 second' where token_hash = sha256(${u.session}::bytea)`;
  t.equal(
    (await getJson(url('/api/advertiser/affiliate-programs'), bearer(u.session))).status,
    401,
    'expired',
  );
});

t.test('bearer kinds are told apart by prefix; the wrong kind is 401', async (t) => {
  const u = await signup(svc);
  for (const h of [
    {},
    { authorization: u.session },
    bearer('aff_tracking_token'),
    bearer('sess_unknown'),
    bearer('affk_unknown'),
    bearer(''),
  ]) {
    const r = await getJson(url('/api/advertiser/affiliate-programs'), h);
    t.equal(r.status, 401, JSON.stringify(h));
    t.type(r.body.error, 'string');
  }
});
