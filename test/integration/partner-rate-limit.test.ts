// Partner sign-in and magic-link requests are limited per IP and per email (docs/partners.md "Rate limits",
// docs/security.md "Sign-in limits and password hashing"): 429 with Retry-After, the limits shared by every
// web process (two processes here, one database), exempt addresses (loopback in the tests) skipping only the
// per-IP ones. test/security/password-guessing.test.ts has the attack with the default limits.
import t from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { PARTNER_PASSWORD, apiProgram, invitedPartner, uniqEmail } from '../helpers/partners.ts';

const env = {
  AUTH_FAILURES_PER_EMAIL: '3',
  AUTH_RATE_LIMIT_PER_MINUTE: '3',
  AUTH_RATE_LIMIT_IP_PER_MINUTE: '5',
};
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
  'per IP: the sixth attempt from one address is 429, whatever the emails, across processes',
  async (t) => {
    const addr = { 'x-forwarded-for': '198.19.7.7' };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const svc = i % 2 === 0 ? one : two;
      const r = await postJson(
        `${svc.baseUrl}/api/partner/auth/login`,
        { email: uniqEmail(), password: 'x'.repeat(10) },
        addr,
      );
      statuses.push(r.status);
    }
    t.same(statuses, [401, 401, 401, 401, 401, 429]);
    // Magic-link requests have buckets of their own, limited the same way.
    const m: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await postJson(
        `${one.baseUrl}/api/partner/auth/magic-link`,
        { email: uniqEmail() },
        { 'x-forwarded-for': '198.19.8.8' },
      );
      m.push(r.status);
    }
    t.same(m, [202, 202, 202, 202, 202, 429]);
    const email = uniqEmail();
    const e: number[] = [];
    for (let i = 0; i < 4; i++)
      e.push((await postJson(`${two.baseUrl}/api/partner/auth/magic-link`, { email }, ip())).status);
    t.same(e, [202, 202, 202, 429], 'per email');
    const cookie = await postJson(
      `${one.baseUrl}/api/partner/auth/session`,
      { email: uniqEmail(), password: 'x'.repeat(10) },
      { 'x-forwarded-for': '198.19.7.7' },
    );
    t.equal(cookie.status, 429, 'the cookie sign-in shares the sign-in buckets');
  },
);

t.test('the buckets hold hashes, never an address or an email', async (t) => {
  const rows = await sql<{ key: string }[]>`select key from rate_limits`;
  t.ok(rows.length > 0);
  for (const r of rows) {
    t.notMatch(r.key, /198\.1[89]\.|@/, r.key);
  }
});
