// The dimensional rollups (program_daily_breakdown) as the workers keep them, after a random mix of clicks,
// leads, sales, refunds and test events sent through the real API: equal to a plain SQL aggregate over the
// raw events for every dimension (shared/db/rollups-check.ts checkProgram), equal to what was sent, and the
// performance endpoint's partnerId / linkId filters read from them.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMmdb } from '../helpers/mmdb-writer.ts';
import { bearer, getJson, memberOf, signup } from '../helpers/accounts.ts';
import { createLink, createProgram, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { geoNetworks, sendMix } from '../helpers/traffic-mix.ts';
import type { Mix } from '../helpers/traffic-mix.ts';
import { DIMENSIONS } from '../../shared/rollups/rules.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';
import { rawBreakdown } from '../../shared/rollups/raw.ts';

const sql = testSql(t);
const dir = mkdtempSync(join(tmpdir(), 'rollups-test-'));
// Removed at exit, not at the root test's teardown: a worker restarted later still opens the file.
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const geoFile = join(dir, 'geo.mmdb');
writeFileSync(geoFile, buildMmdb(geoNetworks));

const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker', 'reversal-worker'], {
  GEOIP_IPV4_PATH: geoFile,
  GEOIP_IPV6_PATH: 'none',
  WORKER_CHUNK_SIZE: '50',
});
const owner = await signup(svc);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });
const a1 = await createLink(sql, program.id);
const a2 = await createLink(sql, program.id, { partnerId: a1.partnerId });
const b1 = await createLink(sql, program.id);
const c1 = await createLink(sql, program.id);
const other = await createProgram(sql);
const otherLink = await createLink(sql, other.id);

const mix: Mix = await sendMix({
  baseUrl: svc.baseUrl,
  program,
  links: [a1, a2, b1, c1],
  seed: 20,
  clicks: 160,
});

const nonTestClicks = async () => {
  const [r] = await sql<{ n: number }[]>`
    select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`;
  return r!.n;
};
await waitFor('every click counted', async () => (await nonTestClicks()) === mix.clicks.length, 60_000);

t.test('every dimension equals the plain SQL aggregate over the raw events', async (t) => {
  const diffs = await checkProgram(sql, program.id, { first: null, last: null });
  t.same(diffs.map(describe), [], 'no difference');
  const [dims] = await sql<{ n: number }[]>`
    select count(distinct dimension)::int as n from program_daily_breakdown where program_id = ${program.id}`;
  t.equal(dims!.n, 8, 'all eight dimensions have rows');
  t.ok(mix.sales.length > 5 && mix.refunds > 0 && mix.leads.length > 10, 'a real mix');
});

t.test('the rollups hold what was sent', async (t) => {
  const rows = await sql<{ dimension: string; key: string; clicks: number; leads: number; sales: number }[]>`
    select dimension, key, sum(clicks)::int as clicks, sum(leads)::int as leads, sum(sales)::int as sales
    from program_daily_breakdown where program_id = ${program.id} group by 1, 2`;
  const got = (dimension: string, key: string) =>
    rows.find((r) => r.dimension === dimension && r.key === key) ?? { clicks: 0, leads: 0, sales: 0 };
  const count = <T>(items: T[], f: (x: T) => boolean) => items.filter(f).length;
  const byClick = new Map(mix.clicks.map((c) => [c.clickId, c]));
  const firstClick = (clickId: string) => mix.clicks.find((c) => c.clickId === clickId && !c.reused)!;
  for (const l of [a1, a2, b1, c1]) {
    t.equal(
      got('link', String(l.id)).clicks,
      count(mix.clicks, (c) => c.link.id === l.id),
      `link ${l.id} clicks`,
    );
  }
  for (const p of [a1.partnerId, b1.partnerId, c1.partnerId]) {
    const mine = (clickId: string) => byClick.get(clickId)!.link.partnerId === p;
    t.equal(
      got('partner', String(p)).clicks,
      count(mix.clicks, (c) => c.link.partnerId === p),
      `partner ${p} clicks`,
    );
    t.equal(got('partner', String(p)).leads, count(mix.leads, mine), `partner ${p} leads`);
    t.equal(
      got('partner', String(p)).sales,
      count(mix.sales, (s) => mine(s.clickId!)),
      `partner ${p} sales`,
    );
  }
  t.equal(got('partner', 'unknown').leads, mix.unattributedLeads.length, 'leads without a click: unknown');
  for (const country of ['DE', 'FR', 'US', 'unknown']) {
    t.equal(
      got('country', country).clicks,
      count(mix.clicks, (c) => c.country === country),
      `${country} clicks`,
    );
    t.equal(
      got('country', country).sales,
      count(mix.sales, (s) => firstClick(s.clickId!).country === country),
      `${country}: the sales of customers whose first click came from there`,
    );
  }
  t.equal(
    got('device', 'mobile').clicks,
    count(mix.clicks, (c) => c.device === 'mobile'),
    'mobile clicks',
  );
  t.equal(
    got('browser', 'Chrome').clicks,
    count(mix.clicks, (c) => c.browser === 'Chrome'),
    'Chrome clicks',
  );
  t.equal(
    got('os', 'iOS').clicks,
    count(mix.clicks, (c) => c.os === 'iOS'),
    'iOS clicks',
  );
  for (const host of ['www.google.com', 'news.example.com', 'blog.example.org', 'com.slack', 'unknown']) {
    t.equal(
      got('referrer', host).clicks,
      count(mix.clicks, (c) => c.referrer === host),
      `referrer ${host}`,
    );
  }
  for (const page of ['https://shop.example/pricing', 'https://shop.example/blog/ünïcode', 'unknown']) {
    t.equal(
      got('landing_page', page).clicks,
      count(mix.clicks, (c) => c.page === page),
      `page ${page}`,
    );
  }
});

t.test('performance filtered by partner or link counts only theirs', async (t) => {
  const perf = async (q: string) => {
    const r = await getJson(
      `${svc.baseUrl}/api/tracking/performance/${program.id}?period=7d${q}`,
      bearer(owner.session),
    );
    return r;
  };
  const metrics = async (q: string) => {
    const r = await perf(q);
    t.equal(r.status, 200, `performance${q}`);
    return (r.body as { metrics: Record<string, number> }).metrics;
  };
  const all = await metrics('');
  t.equal(all.totalClicks, mix.clicks.length, 'unfiltered: every click');
  let clicks = 0;
  let revenue = 0;
  for (const p of [a1.partnerId, b1.partnerId, c1.partnerId]) {
    const m = await metrics(`&partnerId=${p}`);
    const sent = mix.clicks.filter((c) => c.link.partnerId === p);
    const sales = mix.sales.filter(
      (s) => mix.clicks.find((c) => c.clickId === s.clickId)!.link.partnerId === p,
    );
    t.equal(m.totalClicks, sent.length, `partner ${p}: its clicks`);
    t.equal(m.totalSales, sales.length, `partner ${p}: its sales`);
    t.equal(m.totalRevenue, sales.reduce((s, x) => s + x.amount, 0) / 100, `partner ${p}: its revenue`);
    t.equal(m.totalPartners, 1, `partner ${p}: itself joined`);
    clicks += m.totalClicks!;
    revenue += Math.round(m.totalRevenue! * 100);
  }
  t.equal(clicks, all.totalClicks, 'the partners add up to the program');
  t.equal(revenue, Math.round(all.totalRevenue! * 100), 'and so does their revenue');
  const l = await metrics(`&linkId=${a2.id}`);
  t.equal(l.totalClicks, mix.clicks.filter((c) => c.link.id === a2.id).length, 'a link: its clicks');
  const both = await metrics(`&linkId=${a2.id}&partnerId=${a1.partnerId}`);
  t.same(both, l, "a link with its own partner: the link's numbers");
  const daily = (await perf(`&partnerId=${b1.partnerId}`)).body as { data: { clicks: number }[] };
  t.equal(daily.data.length, 7, 'the same shape: one row per day');

  t.same((await perf(`&linkId=${b1.id}&partnerId=${a1.partnerId}`)).body, { error: 'Link not found' });
  t.equal((await perf(`&linkId=${b1.id}&partnerId=${a1.partnerId}`)).status, 404);
  t.same((await perf(`&partnerId=${otherLink.partnerId}`)).body, { error: 'Partner not found' });
  t.same((await perf(`&linkId=${otherLink.id}`)).body, { error: 'Link not found' });
  t.same((await perf(`&partnerId=99999999`)).body, { error: 'Partner not found' });
  for (const bad of ['abc', '0', '-1', '1.5', '']) {
    const r = await perf(`&partnerId=${bad}`);
    t.equal(r.status, 400, `partnerId=${bad}`);
    t.same(r.body, { error: 'partnerId must be a positive integer' });
  }
  t.same((await perf('&linkId=x')).body, { error: 'linkId must be a positive integer' });
  t.same((await perf('&partnerId=1&partnerId=2')).body, { error: 'partnerId must be given once' });
});

t.test('breakdown: each dimension, sorted, labelled, equal to the raw events', async (t) => {
  const raw = await rawBreakdown(sql, program.id, { first: null, last: null }, 'clicks');
  const names = new Map(
    (await sql<{ id: string; name: string }[]>`select id::text, name from partners`).map((r) => [
      r.id,
      r.name,
    ]),
  );
  for (const dimension of DIMENSIONS) {
    const r = await getJson(
      `${svc.baseUrl}/api/tracking/breakdown/${program.id}?dimension=${dimension}&limit=100`,
      bearer(owner.session),
    );
    t.equal(r.status, 200, dimension);
    const body = r.body as { data: Record<string, unknown>[]; meta: Record<string, unknown> };
    const want = new Map<
      string,
      { clicks: number; leads: number; conversions: number; revenue: number; commission: number }
    >();
    for (const row of raw.filter((x) => x.dimension === dimension)) {
      const w = want.get(row.key) ?? { clicks: 0, leads: 0, conversions: 0, revenue: 0, commission: 0 };
      w.clicks += row.clicks;
      w.leads += row.leads;
      w.conversions += row.conversions;
      w.revenue += row.revenue_cents;
      w.commission += row.commission_cents;
      want.set(row.key, w);
    }
    const expected = [...want.entries()]
      .sort(([ka, a], [kb, b]) => b.clicks - a.clicks || (ka < kb ? -1 : ka > kb ? 1 : 0))
      .map(([key, w]) => ({ key, ...w, revenue: w.revenue / 100, commission: w.commission / 100 }));
    t.same(
      body.data.map(({ label: _, ...rest }) => rest),
      expected,
      `${dimension}: every key, sorted by clicks then key, equal to the raw events`,
    );
    t.same(body.meta, {
      dimension,
      period: '7d',
      dateFrom: body.meta.dateFrom,
      dateTo: body.meta.dateTo,
      keys: expected.length,
    });
    for (const row of body.data) {
      const key = row.key as string;
      const label =
        dimension === 'partner' && key !== 'unknown'
          ? names.get(key)
          : dimension === 'link' && key !== 'unknown'
            ? [a1, a2, b1, c1].find((l) => String(l.id) === key)!.shortLink
            : undefined;
      if (label !== undefined) t.equal(row.label, label, `${dimension} ${key} is labelled ${label}`);
    }
  }
  const country = await getJson(
    `${svc.baseUrl}/api/tracking/breakdown/${program.id}?dimension=country&limit=100`,
    bearer(owner.session),
  );
  const labels = Object.fromEntries(
    (country.body.data as { key: string; label: string }[]).map((r) => [r.key, r.label]),
  );
  t.match(labels, { DE: 'Germany', FR: 'France', US: 'United States', unknown: 'Unknown' });
  const referrer = await getJson(
    `${svc.baseUrl}/api/tracking/breakdown/${program.id}?dimension=referrer`,
    bearer(owner.session),
  );
  t.ok((referrer.body.data as { key: string; label: string }[]).some((r) => r.label === 'Direct or unknown'));
});

t.test('breakdown: limit, periods, ranges', async (t) => {
  const get = (q: string) =>
    getJson(`${svc.baseUrl}/api/tracking/breakdown/${program.id}?${q}`, bearer(owner.session));
  const top = await get('dimension=device&limit=1');
  t.equal((top.body.data as unknown[]).length, 1, 'limit 1: one row');
  t.ok((top.body.meta as { keys: number }).keys > 1, 'meta.keys counts every key');
  const def = await get('dimension=landing_page');
  t.ok((def.body.data as unknown[]).length <= 10, 'default limit 10');
  const today = new Date().toISOString().slice(0, 10);
  const all = await get('dimension=partner&period=all');
  const custom = await get(`dimension=partner&dateFrom=${today}&dateTo=${today}`);
  t.same(custom.body.data, all.body.data, 'today alone holds the whole test traffic');
  t.equal((custom.body.meta as { period: string }).period, 'custom');
  const past = await get('dimension=partner&dateFrom=2020-01-01&dateTo=2020-01-31');
  t.same(past.body, {
    data: [],
    meta: {
      dimension: 'partner',
      period: 'custom',
      dateFrom: '2020-01-01T00:00:00.000Z',
      dateTo: '2020-01-31T23:59:59.999Z',
      keys: 0,
    },
  });
});

t.test('breakdown: bad input is a clear 400; access as performance', async (t) => {
  const get = (q: string, headers: Record<string, string> = bearer(owner.session), id = program.id) =>
    getJson(`${svc.baseUrl}/api/tracking/breakdown/${id}?${q}`, headers);
  const dims = 'dimension must be one of partner, link, country, device, browser, os, referrer, landing_page';
  const limit = 'limit must be an integer between 1 and 100';
  const cases: [string, string][] = [
    ['', dims],
    ['dimension=city', dims],
    ['dimension=', dims],
    ['dimension=country&limit=0', limit],
    ['dimension=country&limit=101', limit],
    ['dimension=country&limit=abc', limit],
    ['dimension=country&limit=1.5', limit],
    ['dimension=country&period=1y', 'period must be one of 7d, 30d, 90d, all'],
    ['dimension=country&dateFrom=2025-01-01', 'dateFrom and dateTo must be given together'],
    ['dimension=country&dateFrom=2025-02-01&dateTo=2025-01-01', 'dateFrom must not be after dateTo'],
    [
      'dimension=country&dateFrom=yesterday&dateTo=2025-01-01',
      'dateFrom must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)',
    ],
    ['dimension=country&dimension=os', 'dimension must be given once'],
  ];
  for (const [q, error] of cases) {
    const r = await get(q);
    t.equal(r.status, 400, q);
    t.same(r.body, { error }, q);
  }
  t.equal((await get('dimension=country', {})).status, 401, 'no session: 401');
  t.equal((await get('dimension=country', bearer(program.token))).status, 401, 'a tracking token: 401');
  const foreign = await get('dimension=country', bearer(owner.session), other.id);
  t.equal(foreign.status, 404, "another workspace's program: 404");
  t.same(foreign.body, { error: 'Program not found' });
  t.equal((await get('dimension=city', bearer(owner.session), other.id)).status, 404, '404 before any 400');
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  t.equal((await get('dimension=country', bearer(viewer.session))).status, 200, 'a viewer reads it');
  await sql`update memberships set status = 'inactive' where user_id = ${viewer.userId}`;
  t.equal((await get('dimension=country', bearer(viewer.session))).status, 403, 'an inactive member: 403');
});
