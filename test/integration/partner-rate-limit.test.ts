// Partner sign-in and magic-link requests are limited per IP and per email (docs/partners.md "Rate limits",
// docs/security.md "Sign-in limits and password hashing"): 429 with Retry-After, the limits shared by every
// web process (two processes here, one database), exempt addresses (loopback in the tests) skipping only the
// per-IP ones. test/security/password-guessing.test.ts has the attack with the default limits.
// The per-address and magic-link limits are token buckets whose limit is also their burst, so a token comes
// back every 60/limit seconds: both are 2 a minute here (a token every 30 s), and every limited request
// below directly follows its bucket's burst. Refill cannot reach it unless those requests took 30 s; the
// checks then say so. The per-email failures are counted over 15 minutes, out of any refill's reach.
import t from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { PARTNER_PASSWORD, apiProgram, invitedPartner, uniqEmail } from '../helpers/partners.ts';

const PER_MINUTE = 2;
const REFILL_SECONDS = 60 / PER_MINUTE;
const env = {
  AUTH_FAILURES_PER_EMAIL: '3',
  AUTH_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
  AUTH_RATE_LIMIT_IP_PER_MINUTE: String(PER_MINUTE),
};
/** The precondition every bucket's 429 below rests on, for its message. */
const within = (started: number) =>
  `(precondition: the burst and this request took ${((Date.now() - started) / 1000).toFixed(1)} s of the ${REFILL_SECONDS} s a token takes to come back)`;
const sql = testSql(t);
const one = await startServices(t, ['web'], env);
const two = await startServices(t, ['web'], env);
const owner = await signup(one);
const program = await apiProgram(one, owner);
let n = 0;
const ip = () => ({ 'x-forwarded-for': `198.18.${Math.floor(++n / 250)}.${n % 250}` });
const TOO_MANY = { error: 'Too many attempts' };

t.test(
  'per email: after three failures of one email the fourth sign-in is 429, from any address and process',
  async (t) => {
    const p = await invitedPartner(one, owner, program.id);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const svc = i % 2 === 0 ? one : two;
      const r = await postJson(
        `${svc.baseUrl}/api/partner/auth/login`,
        { email: p.email, password: 'wrong password' },
        ip(),
      );
      statuses.push(r.status);
    }
    t.same(statuses, [401, 401, 401], 'three wrong passwords are answered');
    const fourth = await postJson(
      `${two.baseUrl}/api/partner/auth/login`,
      { email: p.email, password: PARTNER_PASSWORD },
      ip(),
    );
    t.same([fourth.status, fourth.body], [429, TOO_MANY], 'even the right password, from another process');
    const retryAfter = Number(fourth.headers.get('retry-after'));
    t.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 900,
      `Retry-After ${retryAfter}: the seconds until the oldest failure is 15 minutes old`,
    );
    const loopback = await postJson(`${one.baseUrl}/api/partner/auth/login`, {
      email: p.email,
      password: PARTNER_PASSWORD,
    });
    t.equal(loopback.status, 429, 'an exempt address still meets the per-email bucket');
    const otherEmail = await postJson(
      `${one.baseUrl}/api/partner/auth/login`,
      { email: uniqEmail(), password: 'x'.repeat(10) },
      ip(),
    );
    t.equal(otherEmail.status, 401, 'another email is not limited');
  },
);

t.test(
  'per IP: the third attempt from one address is 429, whatever the emails, across processes',
  async (t) => {
    const addr = { 'x-forwarded-for': '198.19.7.7' };
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < PER_MINUTE; i++) {
      const svc = i % 2 === 0 ? one : two;
      const r = await postJson(
        `${svc.baseUrl}/api/partner/auth/login`,
        { email: uniqEmail(), password: 'x'.repeat(10) },
        addr,
      );
      statuses.push(r.status);
    }
    t.same(statuses, [401, 401], 'the burst, one attempt on each process');
    const cookie = await postJson(
      `${one.baseUrl}/api/partner/auth/session`,
      { email: uniqEmail(), password: 'x'.repeat(10) },
      addr,
    );
    t.equal(cookie.status, 429, `the cookie sign-in shares the sign-in bucket ${within(started)}`);
    const third = await postJson(
      `${two.baseUrl}/api/partner/auth/login`,
      { email: uniqEmail(), password: 'x'.repeat(10) },
      addr,
    );
    t.same([third.status, third.body], [429, TOO_MANY], `and so does the login ${within(started)}`);
    // Magic-link requests have buckets of their own, limited the same way.
    const magicStarted = Date.now();
    const m: number[] = [];
    for (let i = 0; i <= PER_MINUTE; i++) {
      const r = await postJson(
        `${one.baseUrl}/api/partner/auth/magic-link`,
        { email: uniqEmail() },
        { 'x-forwarded-for': '198.19.8.8' },
      );
      m.push(r.status);
    }
    t.same(m, [202, 202, 429], `per address ${within(magicStarted)}`);
    const email = uniqEmail();
    const emailStarted = Date.now();
    const e: number[] = [];
    for (let i = 0; i <= PER_MINUTE; i++)
      e.push((await postJson(`${two.baseUrl}/api/partner/auth/magic-link`, { email }, ip())).status);
    t.same(e, [202, 202, 429], `per email ${within(emailStarted)}`);
  },
);

t.test('the buckets hold hashes, never an address or an email', async (t) => {
  const rows = await sql<{ key: string }[]>`select key from rate_limits`;
  t.ok(rows.length > 0);
  for (const r of rows) {
    t.notMatch(r.key, /198\.1[89]\.|@/, r.key);
  }
});
