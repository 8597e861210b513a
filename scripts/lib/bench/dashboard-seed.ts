// The data of bench:dashboard: `events` clicks (and their customers, leads, sales and commissions) over
// `days` days in `programs` programs of one workspace, written by set-based SQL, then the rollups computed
// from the raw rows (program_daily_stats, and the dimensional breakdown as `npm run rollups -- --rebuild`
// writes it).
import type { Sql } from '../../../shared/db/sql.ts';
import { fillCustomerKeys, programDays } from '../../../shared/rollups/rebuild.ts';
import { rebuildDay } from '../../../shared/rollups/operations.ts';
import { int } from './bench.ts';
import * as lifecycle from '../../../shared/commissions/lifecycle.ts';
import { applyLedgerEntries } from '../../../shared/ledger/dal.ts';

/** The programs' hold_days (the column's default): the commissions' payable_at. */
const HOLD_DAYS = 30;

const DAY_MS = 86_400_000;

export interface SeedOptions {
  events: number;
  programs: number;
  days: number;
  partnersPerProgram: number;
  /** Days (and programs of the breakdown) seeded at once. */
  connections: number;
  /** A progress line. */
  say: (msg: string) => void;
  /** Ctrl-C: stop seeding. */
  stopped: () => boolean;
}

export interface Seeded {
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
export async function seed(sql: Sql, o: SeedOptions): Promise<Seeded> {
  const { events: EVENTS, programs: PROGRAMS, days: DAYS, partnersPerProgram: PARTNERS_PER_PROGRAM, say } = o;
  const SEED_CONNECTIONS = o.connections;
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
      while (next < DAYS && !o.stopped()) await seedDay(next++);
    }),
  );
  if (o.stopped()) throw new Error('interrupted');
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
  await buildBreakdown(sql, o);
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
async function buildBreakdown(sql: Sql, o: SeedOptions): Promise<void> {
  const { say } = o;
  const SEED_CONNECTIONS = o.connections;
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
      while (next < programs.length && !o.stopped()) {
        const programId = programs[next++]!;
        await fillCustomerKeys(sql, programId);
        for (const day of await programDays(sql, programId, { first: null, last: null })) {
          if (o.stopped()) return;
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
  if (o.stopped()) throw new Error('interrupted');
  say(`breakdown: ${days} program-days rebuilt in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
