// The demo data of `npm start` (scripts/lib/seed/seed.ts, demo-traffic.ts) in the test database: the demo owner
// logs in with the generated password; about 30 days of traffic whose rollups agree with the raw events
// (every /api/tracking/performance total equals a plain count or sum of the raw tables, and the events
// endpoint's totals; the breakdown equals the raw events by every dimension); partner balances equal their
// ledger; a second run adds nothing; the demo partner signs in to the portal with its generated password
// and the demo program has a public page.
import t from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { getJson } from '../helpers/accounts.ts';
import { DEMO_EMAIL, seedFullDemo } from '../../scripts/lib/seed/seed.ts';
import { DEMO_DESCRIPTION, DEMO_PARTNER_EMAIL } from '../../scripts/lib/seed/partner.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';

const DAY = 86_400_000;
// Seeding and reading must happen on the same UTC day: wait out the last two minutes before midnight.
{
  const left = DAY - (Date.now() % DAY);
  if (left < 120_000) await new Promise((r) => setTimeout(r, left + 1000));
}

const sql = testSql(t);
const dir = await mkdtemp(join(tmpdir(), 'svc-demo-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const files = {
  token: join(dir, 'token.txt'),
  password: join(dir, 'password.txt'),
  partnerPassword: join(dir, 'partner-password.txt'),
};
const demo = await seedFullDemo(sql, files);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const P = demo.programId;

t.test('the demo owner logs in with the generated password, kept in the git-ignored file', async (t) => {
  t.equal(demo.owner.email, DEMO_EMAIL);
  t.match(demo.owner.password, /^[A-Za-z0-9_-]{16}$/);
  t.equal((await readFile(files.password, 'utf8')).trim(), demo.owner.password);
  const [u] = await sql`select password_hash from users where email = ${DEMO_EMAIL}`;
  t.notMatch(u!.password_hash, demo.owner.password, 'stored hashed');
  const r = await postJson(url('/api/auth/session'), { email: DEMO_EMAIL, password: demo.owner.password });
  t.equal(r.status, 200);
  t.match(r.body.data, { workspaces: [{ id: demo.workspaceId, role: 'owner' }] });
});

t.test('30 days of traffic; performance totals equal the raw rows and the events totals', async (t) => {
  t.ok(demo.traffic.seeded);
  t.ok(demo.traffic.clicks > 300, `${demo.traffic.clicks} clicks`);
  t.ok(demo.traffic.leads > 50, `${demo.traffic.leads} leads`);
  t.ok(demo.traffic.sales > 10, `${demo.traffic.sales} sales`);
  t.equal(demo.traffic.refunds, 2);
  const login = await postJson(url('/api/auth/session'), {
    email: DEMO_EMAIL,
    password: demo.owner.password,
  });
  const cookie = { cookie: (login.headers.get('set-cookie') ?? '').split(';')[0]! };

  const [raw] = await sql<
    {
      clicks: number;
      leads: number;
      sales: number;
      conversions: number;
      revenue: number;
      commission: number;
    }[]
  >`
    select (select count(*) from click_events where program_id = ${P} and not is_test)::int as clicks,
           (select count(*) from lead_events where program_id = ${P} and not is_test)::int as leads,
           (select count(*) from sales where program_id = ${P} and not is_test)::int as sales,
           (select count(distinct customer_id) from sales where program_id = ${P} and not is_test)::int as conversions,
           (select coalesce(sum(amount_cents), 0) from sales where program_id = ${P} and not is_test)::int as revenue,
           (select coalesce(sum(amount_cents), 0) from commissions where program_id = ${P})::int as commission`;
  t.equal(raw!.clicks, demo.traffic.clicks);
  const [span] = await sql<{ days: number }[]>`
    select count(distinct (click_timestamp at time zone 'UTC')::date)::int as days from click_events
    where program_id = ${P}`;
  t.ok(span!.days >= 28 && span!.days <= 30, `clicks on ${span!.days} UTC days`);

  for (const period of ['30d', 'all']) {
    const perf = await getJson(url(`/api/tracking/performance/${P}?period=${period}`), cookie);
    t.equal(perf.status, 200, period);
    const m = (perf.body as { metrics: Record<string, number> }).metrics;
    t.match(
      m,
      {
        totalClicks: raw!.clicks,
        totalLeads: raw!.leads,
        totalSales: raw!.sales,
        totalConversions: raw!.conversions,
        totalRevenue: raw!.revenue / 100,
        totalPartnersCommission: raw!.commission / 100,
        totalPartners: 2,
      },
      `${period} totals equal the raw rows`,
    );
    const days = (perf.body as { data: { clicks: number }[] }).data;
    t.equal(
      days.reduce((s, d) => s + d.clicks, 0),
      raw!.clicks,
      `${period}: the daily clicks add up`,
    );
    t.ok(days.filter((d) => d.clicks > 0).length >= 28, `${period}: traffic on most days`);
  }
  for (const [type, want] of [
    ['all', raw!.clicks + raw!.leads + raw!.sales],
    ['click', raw!.clicks],
    ['lead', raw!.leads],
    ['conversion', raw!.sales],
  ] as const) {
    const ev = await getJson(url(`/api/tracking/events/${P}?eventType=${type}&pageSize=5`), cookie);
    t.equal(ev.status, 200);
    t.equal(
      (ev.body as { meta: { pagination: { total: number } } }).meta.pagination.total,
      want,
      `events ${type}`,
    );
  }
  const clicks = await getJson(url(`/api/tracking/events/${P}?eventType=click&pageSize=1`), cookie);
  t.match((clicks.body as { data: unknown[] }).data[0], {
    event_type: 'click',
    device_type: String,
    browser_name: String,
    geo_country: /^[A-Z]{2}$/,
  });
});

t.test('commissions, refunds and balances agree with the ledger', async (t) => {
  const statuses = await sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from commissions where program_id = ${P} group by 1 order by 1`;
  const by = Object.fromEntries(statuses.map((s) => [s.status, s.n]));
  t.ok((by.paid ?? 0) > 0, 'some paid');
  t.ok((by.pending ?? 0) > 0, 'some pending');
  t.equal(by.reversed, 1, 'one full refund');
  t.equal(by.refunded, 1, 'one partial refund');
  const [reasons] =
    await sql`select count(*)::int as n from commissions where program_id = ${P} and refund_reason is not null`;
  t.equal(reasons!.n, 2);
  const balances = await sql<{ id: string; balance_cents: string; ledger: string }[]>`
    select pp.id, pp.balance_cents::text,
           (select coalesce(sum(program_cents), 0) from ledger_entries e where e.partner_program_id = pp.id)::text as ledger
    from partner_programs pp where pp.program_id = ${P}`;
  t.equal(balances.length, 2, 'two partners');
  for (const b of balances) t.equal(b.balance_cents, b.ledger, `partner-program ${b.id}: balance = ledger`);
  const [owed] = await sql<{ cents: string }[]>`
    select coalesce(sum(amount_cents - deducted_cents), 0)::text as cents from commissions
    where program_id = ${P} and status in ('pending', 'refunded', 'reversed') and paid_at is null`;
  const total = balances.reduce((s, b) => s + Number(b.balance_cents), 0);
  t.ok(
    total > 0 && total <= Number(owed!.cents),
    'the balance is what is owed on unpaid commissions, or less',
  );
  const [links] = await sql<{ clicks: number }[]>`
    select sum(clicks)::int as clicks from referral_links where program_id = ${P}`;
  t.equal(links!.clicks, demo.traffic.clicks, 'link click counters');
});

t.test(
  'the breakdown by partner, link, country, device, referrer and page equals the raw events',
  async (t) => {
    t.same((await checkProgram(sql, P, { first: null, last: null })).map(describe), []);
    const [r] = await sql<{ n: number }[]>`
    select count(distinct (dimension, key))::int as n from program_daily_breakdown where program_id = ${P}`;
    t.ok(r!.n > 20, `keys to show (${r!.n})`);
  },
);

t.test('a second run adds nothing and keeps the password', async (t) => {
  const count = async () =>
    (
      await sql`select (select count(*) from click_events where program_id = ${P})::int as c,
                       (select count(*) from sales where program_id = ${P})::int as s,
                       (select count(*) from ledger_entries)::int as l,
                       (select sum(clicks)::int from program_daily_stats where program_id = ${P}) as d,
                       (select count(*) from users where email = ${DEMO_EMAIL})::int as u`
    )[0];
  const before = await count();
  const again = await seedFullDemo(sql, files);
  t.equal(again.traffic.seeded, false);
  t.equal(again.programId, P);
  t.equal(again.owner.password, demo.owner.password);
  t.equal(again.partner.password, demo.partner.password);
  t.equal(again.trackingToken, demo.trackingToken);
  t.same(await count(), before);
});

t.test('the demo partner signs in to the portal and sees the demo program; its public page', async (t) => {
  t.equal(demo.partner.email, DEMO_PARTNER_EMAIL);
  t.match(demo.partner.password, /^[A-Za-z0-9_-]{16}$/);
  t.equal((await readFile(files.partnerPassword, 'utf8')).trim(), demo.partner.password);
  const [a] =
    await sql`select password_hash from partner_accounts where lower(email) = ${DEMO_PARTNER_EMAIL}`;
  t.notMatch(a!.password_hash, demo.partner.password, 'stored hashed');
  const login = await postJson(url('/api/partner/auth/login'), {
    email: DEMO_PARTNER_EMAIL,
    password: demo.partner.password,
  });
  t.equal(login.status, 200, JSON.stringify(login.body));
  const token = (login.body.data as { session_token: string }).session_token;
  const programs = await getJson(url('/api/partner/programs'), { authorization: `Bearer ${token}` });
  t.equal(programs.status, 200);
  t.match(programs.body.data, [
    { program: { id: P, slug: 'demo' }, partner_id: demo.partnerId, status: 'approved' },
  ]);
  t.equal((programs.body.data as unknown[]).length, 1, 'only the claimed record: not the blog partner');
  const links = await getJson(url(`/api/partner/programs/${P}/links`), { authorization: `Bearer ${token}` });
  t.match(links.body.data, [{ short_link: 'demo' }]);

  const page = await getJson(url('/api/public/programs/demo'));
  t.equal(page.status, 200);
  t.match(page.body.data, { name: 'Demo program', slug: 'demo', description: DEMO_DESCRIPTION });
});
