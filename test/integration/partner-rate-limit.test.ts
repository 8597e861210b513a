// Partner sign-in and magic-link requests are rate-limited per IP and per email (docs/partners.md "Rate
// limits"): 429 with Retry-After, the buckets shared by every web process (two processes here, one
// database), exempt addresses skipping only the per-IP bucket.
// Each limit is also its bucket's burst (shared/db/rate-limits.ts: no separate setting), so a token comes
// back every 60/limit seconds. Both limits are 2 a minute: a token every 30 s, and every limited request
// below directly follows its bucket's burst of two (at most two sign-ins' scrypt, a fraction of a second
// here). Refill cannot reach it unless those requests took 30 s; the checks then say so. Two still tells
// the burst (the limit) from one, and splits it across both processes.
import t from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { PARTNER_PASSWORD, apiProgram, invitedPartner, uniqEmail } from '../helpers/partners.ts';

const PER_MINUTE = 2;
const REFILL_SECONDS = 60 / PER_MINUTE;
const env = {
  AUTH_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
  AUTH_RATE_LIMIT_IP_PER_MINUTE: String(PER_MINUTE),
};
const sql = testSql(t);
const one = await startServices(t, ['web'], env);
const two = await startServices(t, ['web'], env);
const owner = await signup(one);
const program = await apiProgram(one, owner);
let n = 0;
const ip = () => ({ 'x-forwarded-for': `198.18.${Math.floor(++n / 250)}.${n % 250}` });
const TOO_MANY = { error: 'Too many attempts; retry later' };
/** Seconds since `started`, and the precondition every 429 below rests on, for its message. */
const elapsed = (started: number) => {
  const seconds = (Date.now() - started) / 1000;
  return {
    seconds,
    note: `(precondition: the burst and this request took ${seconds.toFixed(1)} s of the ${REFILL_SECONDS} s a token takes to come back)`,
  };
};

t.test(
  'per email: the third sign-in of one email in a minute is 429, from any address and process',
  async (t) => {
    const p = await invitedPartner(one, owner, program.id);
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < PER_MINUTE; i++) {
      const svc = i % 2 === 0 ? one : two;
      const r = await postJson(
        `${svc.baseUrl}/api/partner/auth/login`,
        { email: p.email, password: 'wrong password' },
        ip(),
      );
      statuses.push(r.status);
    }
    t.same(statuses, [401, 401], 'two wrong passwords are answered');
    const third = await postJson(
      `${one.baseUrl}/api/partner/auth/login`,
      { email: p.email, password: PARTNER_PASSWORD },
      ip(),
    );
    const w = elapsed(started);
    t.same(
      [third.status, third.body],
      [429, TOO_MANY],
      `even the right password, from another process ${w.note}`,
    );
    // The bucket held less than a token since the first sign-in: Retry-After is the rest of the 30 s that
    // token takes, so at least 30 less the seconds these requests took.
    const retryAfter = Number(third.headers.get('retry-after'));
    t.ok(
      retryAfter <= REFILL_SECONDS && retryAfter >= Math.max(1, REFILL_SECONDS - Math.ceil(w.seconds)),
      `Retry-After ${retryAfter}: the seconds to the next token`,
    );
    const loopback = await postJson(`${two.baseUrl}/api/partner/auth/login`, {
      email: p.email,
      password: PARTNER_PASSWORD,
    });
    t.equal(
      loopback.status,
      429,
      `an exempt address still meets the per-email bucket ${elapsed(started).note}`,
    );
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
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i <= PER_MINUTE; i++) {
      const svc = i % 2 === 0 ? one : two;
      const r = await postJson(
        `${svc.baseUrl}/api/partner/auth/login`,
        { email: uniqEmail(), password: 'x'.repeat(10) },
        addr,
      );
      statuses.push(r.status);
    }
    // Straight after the burst, before anything else can let a token come back.
    const cookie = await postJson(
      `${two.baseUrl}/api/partner/auth/session`,
      { email: uniqEmail(), password: 'x'.repeat(10) },
      addr,
    );
    const w = elapsed(started);
    t.same(statuses, [401, 401, 429], `the third sign-in is limited ${w.note}`);
    t.equal(cookie.status, 429, `the cookie sign-in shares the sign-in buckets ${w.note}`);
    // Magic-link requests have buckets of their own, limited the same way.
    const m: number[] = [];
    const mStarted = Date.now();
    for (let i = 0; i <= PER_MINUTE; i++) {
      const r = await postJson(
        `${one.baseUrl}/api/partner/auth/magic-link`,
        { email: uniqEmail() },
        { 'x-forwarded-for': '198.19.8.8' },
      );
      m.push(r.status);
    }
    t.same(m, [202, 202, 429], `per IP ${elapsed(mStarted).note}`);
    const email = uniqEmail();
    const e: number[] = [];
    const eStarted = Date.now();
    for (let i = 0; i <= PER_MINUTE; i++)
      e.push((await postJson(`${two.baseUrl}/api/partner/auth/magic-link`, { email }, ip())).status);
    t.same(e, [202, 202, 429], `per email ${elapsed(eStarted).note}`);
  },
);

t.test('the buckets hold hashes, never an address or an email', async (t) => {
  const rows = await sql<{ key: string }[]>`select key from rate_limits`;
  t.ok(rows.length > 0);
  for (const r of rows) {
    t.notMatch(r.key, /198\.1[89]\.|@/, r.key);
  }
});
