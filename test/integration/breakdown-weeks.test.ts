// The breakdown reads whole weeks from program_weekly_breakdown and the days around them from
// program_daily_breakdown (0018_weekly_breakdown.sql). Here the workers' own writer (RollupBuffer) puts
// random deltas on random days of ten weeks, in many transactions; then every weekly row equals the sum of
// its days, and GET /api/tracking/breakdown over random ranges (every weekday as first and last day, ranges
// inside one week, across weeks, of one day) equals the plain sum of the daily rows of the range. A rebuilt
// day (rebuildDay, which rewrites it from the raw events: none here) takes its days out of the weeks too.
import t from 'tap';
import type { Test } from 'tap';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { createProgram, startServices, testSql } from '../helpers/stack.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';
import { DIMENSIONS } from '../../shared/rollups/rules.ts';
import type { Dimension } from '../../shared/rollups/rules.ts';
import { describe, weeklyDifferences } from '../../shared/rollups/check.ts';
import { rebuildDay } from '../../shared/rollups/operations.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const owner = await signup(svc);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const text = (ms: number) => new Date(ms).toISOString().slice(0, 10);
// A small deterministic generator: a failure can be replayed.
let seed = 7;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const keys = (i: number): Partial<Record<Dimension, string>> => ({
  partner: String(1 + (i % 5)),
  link: String(10 + (i % 7)),
  country: ['US', 'DE', 'FR', 'unknown'][i % 4]!,
  device: ['mobile', 'desktop'][i % 2]!,
  browser: ['Chrome', 'Firefox', 'Safari'][i % 3]!,
  os: ['iOS', 'Android', 'Windows'][i % 3]!,
  referrer: `blog${i % 11}.example`,
  landing_page: `https://shop.example/p/${i % 13}`,
});

// 60 transactions of 1..20 events each, on days of the last 70 (several days of one week in one
// transaction, as a worker's chunk after an outage can hold).
for (let tx = 0; tx < 60; tx++) {
  const buf = new RollupBuffer();
  for (let e = 1 + rnd(20); e > 0; e--) {
    const day = today - rnd(70) * DAY;
    const sale = rnd(4) === 0;
    buf.add(
      program.id,
      day + rnd(DAY),
      {
        clicks: 1,
        leads: rnd(3) === 0 ? 1 : 0,
        ...(sale ? { sales: 1, revenue_cents: 500 + rnd(5000), commission_cents: 50 + rnd(500) } : {}),
      },
      keys(rnd(1000)),
    );
  }
  await sql.begin((t) => buf.flush(t));
}

t.test('every weekly row is the sum of its days', async (t) => {
  t.same((await weeklyDifferences(sql, program.id, { first: null, last: null })).map(describe), []);
  const [w] = await sql<{ n: number }[]>`
    select count(distinct week)::int as n from program_weekly_breakdown where program_id = ${program.id}`;
  t.ok(w!.n >= 10, `rows in ${w!.n} weeks`);
});

/** The plain answer: the daily rows of the range summed per key, sorted as the API sorts. */
async function plain(dimension: Dimension, first: string, last: string) {
  const rows = await sql<Record<string, string>[]>`
    select key, sum(clicks)::text as clicks, sum(leads)::text as leads, sum(conversions)::text as conversions,
           sum(revenue_cents)::text as revenue, sum(commission_cents)::text as commission
    from program_daily_breakdown
    where program_id = ${program.id} and dimension = ${dimension} and day between ${first}::date and ${last}::date
    group by key order by sum(clicks) desc, key collate "C"`;
  return rows.map((r) => ({
    key: r.key,
    clicks: Number(r.clicks),
    leads: Number(r.leads),
    conversions: Number(r.conversions),
    revenue: Number(r.revenue) / 100,
    commission: Number(r.commission) / 100,
  }));
}

async function compare(t: Test, dimension: Dimension, first: string, last: string) {
  const r = await getJson(
    `${svc.baseUrl}/api/tracking/breakdown/${program.id}?dimension=${dimension}&dateFrom=${first}&dateTo=${last}&limit=100`,
    bearer(owner.session),
  );
  t.equal(r.status, 200);
  const body = r.body as { data: Record<string, unknown>[]; meta: { keys: number } };
  const want = await plain(dimension, first, last);
  t.same(
    body.data.map(({ label: _, ...rest }) => rest),
    want,
    `${dimension} ${first}..${last}`,
  );
  t.equal(body.meta.keys, want.length, 'keys');
}

t.test('any range equals the plain sum of its days', async (t) => {
  // Every weekday as the first day, lengths 1..30 days, and a few long ranges.
  for (let start = 0; start < 7; start++)
    for (const len of [1, 2, 6, 7, 8, 13, 14, 15, 30]) {
      const first = today - (45 + start) * DAY;
      await compare(
        t,
        DIMENSIONS[(start + len) % DIMENSIONS.length]!,
        text(first),
        text(first + (len - 1) * DAY),
      );
    }
  await compare(t, 'referrer', text(today - 69 * DAY), text(today));
  await compare(t, 'partner', text(today - 89 * DAY), text(today + 3 * DAY));
});

t.test('a rebuilt day leaves the weeks equal to their days', async (t) => {
  // No raw events here: the rebuild empties the day, and its week loses what the day had.
  const day = text(today - 20 * DAY);
  await rebuildDay(sql, program.id, day);
  const [d] = await sql<{ n: number }[]>`
    select count(*)::int as n from program_daily_breakdown where program_id = ${program.id} and day = ${day}::date`;
  t.equal(d!.n, 0, 'the day is empty');
  t.same((await weeklyDifferences(sql, program.id, { first: null, last: null })).map(describe), []);
  await compare(t, 'referrer', text(today - 27 * DAY), text(today - 14 * DAY));
});
