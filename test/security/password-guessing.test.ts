// The attack: guessing passwords on the sign-in routes, as many as the service answers, each one an expensive
// hash on the thread pool. CONTRACT part three "Sign-in resists guessing": per address and per email, 429
// `Too many attempts` with Retry-After; at most 10 failures per email per 15 minutes, a success clears them
// (docs/security.md "Sign-in limits and password hashing"). Each client here has an X-Forwarded-For address
// of its own (the tests' loopback is exempt from the per-address limits: test/helpers/stack.ts).
import t from 'tap';
import type { Test } from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { PASSWORD, bearer, send, signup } from '../helpers/accounts.ts';
import {
  PARTNER_PASSWORD,
  addPartner,
  apiProgram,
  invitedPartner,
  tokenOf,
  uniqEmail,
} from '../helpers/partners.ts';

const TOO_MANY = { error: 'Too many attempts' };
const WINDOW_S = 15 * 60;
const sql = testSql(t);
// The defaults: 10 failures per email in 15 minutes, 30 password checks per address and minute.
const svc = await startServices(t, ['web']);
// Low per-address bounds, so one address meets them long before any email does.
const low = await startServices(t, ['web'], {
  AUTH_RATE_LIMIT_IP_PER_MINUTE: '3',
  SIGNUP_RATE_LIMIT_PER_HOUR: '2',
});

let n = 0;
/** A client address of its own (198.18.0.0/15, the benchmarking range). */
const address = () => {
  n++;
  return { 'x-forwarded-for': `198.18.${Math.floor(n / 250)}.${n % 250}` };
};
const url = (s: { baseUrl: string }, path: string) => `${s.baseUrl}${path}`;

/** The status of each attempt; the first 429's Retry-After. */
async function guess(
  attempts: number,
  one: (i: number) => Promise<{ status: number; body: unknown; headers: Headers }>,
) {
  const statuses: number[] = [];
  let limited: { body: unknown; retryAfter: string | null } | null = null;
  for (let i = 0; i < attempts; i++) {
    const r = await one(i);
    statuses.push(r.status);
    if (r.status === 429 && limited === null)
      limited = { body: r.body, retryAfter: r.headers.get('retry-after') };
  }
  return { statuses, limited };
}

const times = (k: number, status: number) => Array.from({ length: k }, () => status);

function isRetryAfter(t: Test, value: string | null | undefined, max: number) {
  t.match(value, /^[1-9][0-9]*$/, 'Retry-After: whole seconds');
  t.ok(Number(value) <= max, `Retry-After ${value} is at most ${max}`);
}

t.test('dashboard log in: 30 wrong passwords for one email from one address', async (t) => {
  const user = await signup(svc);
  const from = address();
  const { statuses, limited } = await guess(30, () =>
    postJson(url(svc, '/api/auth/login'), { email: user.email, password: 'wrong password!' }, from),
  );
  t.same(statuses, [...times(10, 401), ...times(20, 429)], '10 failures answered, then 429 from the 11th');
  t.same(limited?.body, TOO_MANY);
  isRetryAfter(t, limited?.retryAfter, WINDOW_S);
  const right = await postJson(
    url(svc, '/api/auth/login'),
    { email: user.email.toUpperCase(), password: PASSWORD },
    address(),
  );
  t.same([right.status, right.body], [429, TOO_MANY], 'the right password too, from any address, any case');
  const cookie = await postJson(url(svc, '/api/auth/session'), { email: user.email, password: PASSWORD });
  t.equal(cookie.status, 429, 'and the cookie log in');
  const other = await signup(svc);
  const ok = await postJson(
    url(svc, '/api/auth/login'),
    { email: other.email, password: PASSWORD },
    address(),
  );
  t.equal(ok.status, 200, 'another email is not locked by this one');
});

t.test('30 guesses for one email at once: still exactly 10 are checked', async (t) => {
  const user = await signup(svc);
  const answers = await Promise.all(
    Array.from({ length: 30 }, () =>
      postJson(url(svc, '/api/auth/login'), { email: user.email, password: 'wrong password!' }, address()),
    ),
  );
  const count = (status: number) => answers.filter((a) => a.status === status).length;
  t.same([count(401), count(429)], [10, 20], 'a check counts from the moment it starts');
});

t.test('the cookie log in counts with the bearer one; a success clears the failures', async (t) => {
  const user = await signup(svc);
  const from = address();
  const path = (i: number) => (i % 2 === 0 ? '/api/auth/login' : '/api/auth/session');
  const wrong = (i: number) =>
    postJson(url(svc, path(i)), { email: user.email, password: 'nope nope!' }, from);
  t.same((await guess(9, wrong)).statuses, times(9, 401));
  const ok = await postJson(url(svc, '/api/auth/session'), { email: user.email, password: PASSWORD }, from);
  t.equal(ok.status, 200, 'the right password after 9 failures');
  const again = await guess(11, (i) => wrong(i));
  t.same(again.statuses, [...times(10, 401), 429], 'ten more failures allowed after the success, not 1');
});

t.test('per address: many emails from one address meet its own bound', async (t) => {
  const from = address();
  const { statuses, limited } = await guess(4, (i) =>
    postJson(
      url(low, i % 2 === 0 ? '/api/auth/login' : '/api/partner/auth/login'),
      { email: uniqEmail('guess'), password: 'x'.repeat(12) },
      from,
    ),
  );
  t.same(statuses, [401, 401, 401, 429], 'three checks a minute, dashboard and partner routes together');
  t.same(limited?.body, TOO_MANY);
  isRetryAfter(t, limited?.retryAfter, 60);
  const elsewhere = await postJson(
    url(low, '/api/auth/login'),
    { email: uniqEmail('guess'), password: 'x'.repeat(12) },
    address(),
  );
  t.equal(elsewhere.status, 401, 'another address is not limited');
});

t.test('signup: per address, and per email', async (t) => {
  const from = address();
  const make = () =>
    postJson(url(low, '/api/auth/signup'), { email: uniqEmail('owner'), password: PASSWORD }, from);
  const { statuses, limited } = await guess(3, make);
  t.same(statuses, [201, 201, 429], 'two signups an hour from one address');
  t.same(limited?.body, TOO_MANY);
  isRetryAfter(t, limited?.retryAfter, 3600);
  const cookieSignup = await postJson(
    url(low, '/api/auth/session/signup'),
    { email: uniqEmail('owner'), password: PASSWORD },
    from,
  );
  t.equal(cookieSignup.status, 429, 'the cookie signup shares the bucket');

  const email = uniqEmail('owner');
  const again = await guess(12, () =>
    postJson(url(svc, '/api/auth/signup'), { email, password: PASSWORD }, address()),
  );
  t.same(again.statuses, [201, ...times(10, 409), 429], 'one email: made once, then ten 409s, then 429');
});

t.test(
  'partner routes: login, cookie login, accept-invite and current_password count together',
  async (t) => {
    const owner = await signup(svc);
    const program = await apiProgram(svc, owner);
    const p = await invitedPartner(svc, owner, program.id);
    const from = address();
    const routes = ['/api/partner/auth/login', '/api/partner/auth/session'];
    const { statuses, limited } = await guess(30, (i) =>
      postJson(url(svc, routes[i % 2]!), { email: p.email, password: 'wrong password!' }, from),
    );
    t.same(statuses, [...times(10, 401), ...times(20, 429)]);
    t.same(limited?.body, TOO_MANY);
    isRetryAfter(t, limited?.retryAfter, WINDOW_S);
    const right = await postJson(
      url(svc, '/api/partner/auth/login'),
      { email: p.email, password: PARTNER_PASSWORD },
      address(),
    );
    t.same([right.status, right.body], [429, TOO_MANY], 'the right password too');

    // PUT /api/partner/me's current_password is a password check of the account's email.
    const q = await invitedPartner(svc, owner, program.id);
    const change = (current: string) =>
      send(
        'PUT',
        url(svc, '/api/partner/me'),
        { password: 'a new password 1', current_password: current },
        { ...bearer(q.session), ...address() },
      );
    const wrongCurrent: number[] = [];
    for (let i = 0; i < 10; i++) wrongCurrent.push((await change('not the password')).status);
    t.same(wrongCurrent, times(10, 400), 'ten wrong current passwords: 400');
    const locked = await change(PARTNER_PASSWORD);
    t.same([locked.status, locked.body], [429, TOO_MANY], 'the eleventh check is refused, right or not');
    const signIn = await postJson(
      url(svc, '/api/partner/auth/login'),
      { email: q.email, password: PARTNER_PASSWORD },
      address(),
    );
    t.equal(signIn.status, 429, 'and so is signing in with that email');

    // Another workspace's invite for an email whose (verified) account has a password checks that password.
    const r = await invitedPartner(svc, owner, program.id);
    await sql`update partner_accounts set email_verified_at = now() where id = ${r.accountId}`;
    const owner2 = await signup(svc);
    const other = await apiProgram(svc, owner2);
    const invite = await addPartner(svc, owner2, other.id, { email: r.email });
    const accept = (password: string) =>
      postJson(
        url(svc, '/api/partner/auth/accept-invite'),
        { token: tokenOf(invite.inviteUrl!), password },
        address(),
      );
    const accepts: number[] = [];
    for (let i = 0; i < 10; i++) accepts.push((await accept('wrong password!')).status);
    t.same(accepts, times(10, 401));
    const eleventh = await accept(PARTNER_PASSWORD);
    t.same([eleventh.status, eleventh.body], [429, TOO_MANY]);
  },
);

t.test('dashboard users and partner accounts with one email are counted apart', async (t) => {
  const email = uniqEmail('both');
  await signup(svc, { email });
  const wrong = (path: string) => postJson(url(svc, path), { email, password: 'wrong password!' }, address());
  t.same((await guess(11, () => wrong('/api/partner/auth/login'))).statuses, [...times(10, 401), 429]);
  const dash = await postJson(url(svc, '/api/auth/login'), { email, password: PASSWORD }, address());
  t.equal(dash.status, 200, "the partner side's failures do not lock the dashboard user");
});

t.test('the limits keep hashes, never an address or an email', async (t) => {
  const keys = [
    ...(await sql<{ key: string }[]>`select key from sign_in_failures`),
    ...(await sql<{ key: string }[]>`select key from rate_limits`),
  ];
  t.ok(keys.length > 0);
  for (const { key } of keys) t.notMatch(key, /198\.1[89]\.|@|127\.0\.0\.1/, key);
});
