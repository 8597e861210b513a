// The rollups computed from the raw events, in plain SQL: what `npm run rollups -- --rebuild` writes and
// what `--check` (and bench:dashboard, and the tests) compare the workers' rows with.
//
// The raw definition, per UTC day (the one program_daily_stats has always had):
//   clicks       non-test click events, under their own partner, link and visit keys;
//   leads        non-test lead events;
//   conversions  customers whose first_purchase_date is that day;
//   sales        non-test sales, and their revenue;
//   commission   the commissions of those sales, on the sale's day (a refund changes neither: the
//                rollups count what was earned that day, as they always have).
// Leads, conversions, sales and commission count under their customer's partner and link, and under the
// visit keys of its attributing click: its first non-test click event (click time, then event id).
// A customer without a click counts under `unknown`.
import type { Sql, Tx } from '../../shared/db/sql.ts';
import {
  ATTR_COLUMNS,
  DIMENSIONS,
  KEYS_PER_DAY,
  OTHER_KEY,
  FIELDS,
  UNKNOWN_KEY,
  VISIT_DIMENSIONS,
  visitKeySql,
} from '../../shared/pipeline/breakdown.ts';
import type { Dimension } from '../../shared/pipeline/breakdown.ts';

export type Counters = Record<(typeof FIELDS)[number], number>;
export interface KeyRow extends Counters {
  day: string;
  dimension: Dimension;
  key: string;
}

/** Days first..last (YYYY-MM-DD, inclusive); null: unbounded. */
export interface DayRange {
  first: string | null;
  last: string | null;
}

const zero = (): Counters => ({
  clicks: 0,
  leads: 0,
  conversions: 0,
  sales: 0,
  revenue_cents: 0,
  commission_cents: 0,
});
const add = (a: Counters, b: Counters): void => {
  for (const c of FIELDS) a[c] += b[c];
};
const equal = (a: Counters, b: Counters): boolean => FIELDS.every((c) => a[c] === b[c]);
const isZero = (a: Counters): boolean => FIELDS.every((c) => a[c] === 0);

type Db = Sql | Tx;

function bounds(range: DayRange): { lo: string; hi: string } {
  const next = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString();
  return {
    lo: range.first === null ? '-infinity' : `${range.first}T00:00:00Z`,
    hi: range.last === null ? 'infinity' : next(range.last),
  };
}

const toRow = (r: Record<string, string>): KeyRow => ({
  day: r.day!,
  dimension: r.dimension as Dimension,
  key: r.key!,
  clicks: Number(r.clicks),
  leads: Number(r.leads),
  conversions: Number(r.conversions),
  sales: Number(r.sales),
  revenue_cents: Number(r.revenue_cents),
  commission_cents: Number(r.commission_cents),
});

/**
 * The breakdown of a program's days from the raw events, uncapped (every key its own row). A customer's
 * visit keys come from its first click event (`clicks`: what the check needs) or from the customer row
 * (`stored`: what the rebuild writes, once fillCustomerKeys filled the rows created before 0014).
 */
export async function rawBreakdown(
  db: Db,
  programId: number,
  range: DayRange,
  customerKeys: 'clicks' | 'stored',
): Promise<KeyRow[]> {
  const { lo, hi } = bounds(range);
  const inRange = (col: string) =>
    db.unsafe(`${col} >= '${lo}'::timestamptz and ${col} < '${hi}'::timestamptz`);
  const clickKeys = visitKeySql('e');
  const firstKeys = visitKeySql('f');
  const visit = VISIT_DIMENSIONS.map((d) =>
    customerKeys === 'clicks'
      ? `${firstKeys[d]} as ${d}`
      : `coalesce(c.${ATTR_COLUMNS[d]}, '${UNKNOWN_KEY}') as ${d}`,
  ).join(', ');
  const first =
    customerKeys === 'clicks'
      ? db`left join lateral (
             select e.geo_country, e.device_type, e.browser_name, e.device_os, e.referrer_url, e.page_url
             from click_events e where e.click_id = c.click_id and e.program_id = c.program_id and not e.is_test
             order by e.click_timestamp, e.event_id limit 1) f on true`
      : db``;
  const keyCols = ['partner', 'link', ...VISIT_DIMENSIONS].map((d) => `k.${d}`).join(', ');
  const rows = await db<Record<string, string>[]>`
    with cust as (
      select c.id, coalesce(c.partner_id::text, ${UNKNOWN_KEY}) as partner,
             coalesce(c.link_id::text, ${UNKNOWN_KEY}) as link, ${db.unsafe(visit)}
      from customers c ${first}
      where c.program_id = ${programId} and (
        c.id in (select customer_id from lead_events
                 where program_id = ${programId} and not is_test and ${inRange('lead_timestamp')}
                 union
                 select customer_id from sales
                 where program_id = ${programId} and not is_test and ${inRange('sale_date')})
        or (c.customer_status = 'conversion' and ${inRange('c.first_purchase_date')}))
    ),
    ev as (
      select (e.click_timestamp at time zone 'UTC')::date as day,
             coalesce(e.partner_id::text, ${UNKNOWN_KEY}) as partner, coalesce(e.link_id::text, ${UNKNOWN_KEY}) as link,
             ${db.unsafe(VISIT_DIMENSIONS.map((d) => `${clickKeys[d]} as ${d}`).join(', '))},
             1 as clicks, 0 as leads, 0 as conversions, 0 as sales, 0::bigint as revenue_cents, 0::bigint as commission_cents
      from click_events e
      where e.program_id = ${programId} and not e.is_test and ${inRange('e.click_timestamp')}
      union all
      select (l.lead_timestamp at time zone 'UTC')::date, ${db.unsafe(keyCols)}, 0, 1, 0, 0, 0, 0
      from lead_events l left join cust k on k.id = l.customer_id
      where l.program_id = ${programId} and not l.is_test and ${inRange('l.lead_timestamp')}
      union all
      select (c.first_purchase_date at time zone 'UTC')::date, ${db.unsafe(keyCols)}, 0, 0, 1, 0, 0, 0
      from customers c join cust k on k.id = c.id
      where c.program_id = ${programId} and c.customer_status = 'conversion' and ${inRange('c.first_purchase_date')}
      union all
      select (s.sale_date at time zone 'UTC')::date, ${db.unsafe(keyCols)}, 0, 0, 0, 1, s.amount_cents, 0
      from sales s left join cust k on k.id = s.customer_id
      where s.program_id = ${programId} and not s.is_test and ${inRange('s.sale_date')}
      union all
      select (s.sale_date at time zone 'UTC')::date, ${db.unsafe(keyCols)}, 0, 0, 0, 0, 0, m.amount_cents
      from commissions m join sales s on s.id = m.sale_id left join cust k on k.id = s.customer_id
      where s.program_id = ${programId} and not s.is_test and ${inRange('s.sale_date')}
    )
    select ev.day::text as day, d.dimension, coalesce(d.key, ${UNKNOWN_KEY}) as key,
           sum(clicks)::text as clicks, sum(leads)::text as leads, sum(conversions)::text as conversions,
           sum(sales)::text as sales, sum(revenue_cents)::text as revenue_cents,
           sum(commission_cents)::text as commission_cents
    from ev cross join lateral (values ('partner', ev.partner), ('link', ev.link), ('country', ev.country),
                                       ('device', ev.device), ('browser', ev.browser), ('os', ev.os),
                                       ('referrer', ev.referrer), ('landing_page', ev.landing_page)) as d(dimension, key)
    group by 1, 2, 3`;
  return rows.map(toRow);
}

/** The program's rows of program_daily_breakdown in the range. */
export async function storedBreakdown(db: Db, programId: number, range: DayRange): Promise<KeyRow[]> {
  const rows = await db<Record<string, string>[]>`
    select day::text as day, dimension, key, clicks::text as clicks, leads::text as leads,
           conversions::text as conversions, sales::text as sales, revenue_cents::text as revenue_cents,
           commission_cents::text as commission_cents
    from program_daily_breakdown
    where program_id = ${programId}
      ${range.first === null ? db`` : db`and day >= ${range.first}::date`}
      ${range.last === null ? db`` : db`and day <= ${range.last}::date`}`;
  return rows.map(toRow);
}

/** The program's rows of program_daily_stats in the range, by day. */
async function storedDaily(db: Db, programId: number, range: DayRange): Promise<Map<string, Counters>> {
  const rows = await db<Record<string, string>[]>`
    select day::text as day, clicks::text as clicks, leads::text as leads, conversions::text as conversions,
           sales::text as sales, revenue_cents::text as revenue_cents, commission_cents::text as commission_cents
    from program_daily_stats
    where program_id = ${programId}
      ${range.first === null ? db`` : db`and day >= ${range.first}::date`}
      ${range.last === null ? db`` : db`and day <= ${range.last}::date`}`;
  return new Map(rows.map((r) => [r.day!, toRow({ ...r, dimension: 'partner', key: '' })]));
}

/**
 * Caps each visit dimension's keys per day as the workers do (KEYS_PER_DAY, then `other`); the rebuild
 * keeps the keys with the most clicks (then leads, conversions, revenue; then key order), where the
 * workers keep those seen first.
 */
export function capKeys(rows: KeyRow[]): KeyRow[] {
  const groups = new Map<string, KeyRow[]>();
  const out: KeyRow[] = [];
  for (const r of rows) {
    if (!(VISIT_DIMENSIONS as readonly string[]).includes(r.dimension)) {
      out.push(r);
      continue;
    }
    const g = `${r.day}\u0000${r.dimension}`;
    (groups.get(g) ?? groups.set(g, []).get(g)!).push(r);
  }
  for (const g of groups.values()) {
    const ranked = g
      .filter((r) => r.key !== UNKNOWN_KEY && r.key !== OTHER_KEY)
      .sort(
        (a, b) =>
          b.clicks - a.clicks ||
          b.leads - a.leads ||
          b.conversions - a.conversions ||
          b.revenue_cents - a.revenue_cents ||
          (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
      );
    const kept = new Set(ranked.slice(0, KEYS_PER_DAY));
    let other: KeyRow | null = null;
    for (const r of g) {
      if (r.key === UNKNOWN_KEY || kept.has(r)) out.push(r);
      else {
        other ??= { ...r, key: OTHER_KEY, ...zero() };
        add(other, r);
      }
    }
    if (other) out.push(other);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// The check

export interface Difference {
  programId: number;
  day: string;
  /** `total`: program_daily_stats itself. */
  dimension: Dimension | 'total';
  key: string;
  rollup: Counters;
  raw: Counters;
  /** What is wrong, in words. */
  problem: string;
}

/**
 * Compares a program's rollups with the raw events over the range. For each day and dimension: every key
 * row but `other` equals the raw aggregate of that key; `other` equals the raw keys that have no row of
 * their own; a visit dimension has at most KEYS_PER_DAY keys besides `unknown` and `other`. And
 * program_daily_stats equals the raw day totals. An empty result means equal.
 */
export async function checkProgram(db: Db, programId: number, range: DayRange): Promise<Difference[]> {
  const [raw, stored, daily] = await Promise.all([
    rawBreakdown(db, programId, range, 'clicks'),
    storedBreakdown(db, programId, range),
    storedDaily(db, programId, range),
  ]);
  const diffs: Difference[] = [];
  const group = (rows: KeyRow[]) => {
    const m = new Map<string, Map<string, KeyRow>>();
    for (const r of rows) {
      const g = `${r.day}\u0000${r.dimension}`;
      (m.get(g) ?? m.set(g, new Map()).get(g)!).set(r.key, r);
    }
    return m;
  };
  const rawGroups = group(raw);
  const storedGroups = group(stored);
  for (const g of new Set([...rawGroups.keys(), ...storedGroups.keys()])) {
    const [day, dimension] = g.split('\u0000') as [string, Dimension];
    const r = rawGroups.get(g) ?? new Map<string, KeyRow>();
    const s = storedGroups.get(g) ?? new Map<string, KeyRow>();
    const diff = (key: string, rollup: Counters, rawC: Counters, problem: string) =>
      diffs.push({ programId, day, dimension, key, rollup, raw: rawC, problem });
    const rest = zero();
    for (const [key, row] of r) if (key === OTHER_KEY || !s.has(key)) add(rest, row);
    for (const [key, row] of s) {
      if (key === OTHER_KEY) continue;
      const want = r.get(key) ?? zero();
      if (!equal(row, want)) diff(key, row, want, 'key row differs from the raw events');
    }
    const other = s.get(OTHER_KEY) ?? zero();
    if (!equal(other, rest)) diff(OTHER_KEY, other, rest, '`other` differs from the raw keys without a row');
    if (!isZero(other) && !(VISIT_DIMENSIONS as readonly string[]).includes(dimension))
      diff(OTHER_KEY, other, zero(), '`other` in a dimension that is not capped');
    const own = [...s.keys()].filter((k) => k !== OTHER_KEY && k !== UNKNOWN_KEY).length;
    if ((VISIT_DIMENSIONS as readonly string[]).includes(dimension) && own > KEYS_PER_DAY)
      diff('*', zero(), zero(), `${own} keys, more than ${KEYS_PER_DAY}`);
  }
  // program_daily_stats against the raw totals (every event has exactly one partner key).
  const totals = new Map<string, Counters>();
  for (const row of raw) {
    if (row.dimension !== 'partner') continue;
    add(totals.get(row.day) ?? totals.set(row.day, zero()).get(row.day)!, row);
  }
  for (const day of new Set([...totals.keys(), ...daily.keys()])) {
    const want = totals.get(day) ?? zero();
    const got = daily.get(day) ?? zero();
    if (!equal(got, want))
      diffs.push({
        programId,
        day,
        dimension: 'total',
        key: '',
        rollup: got,
        raw: want,
        problem: 'program_daily_stats differs from the raw events',
      });
  }
  diffs.push(...(await weeklyDifferences(db, programId, range)));
  return diffs.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/**
 * program_weekly_breakdown against the sum of its days in program_daily_breakdown, for every week that
 * meets the range (whole weeks: a week's row counts all seven of its days). `day` is the week's Monday.
 */
export async function weeklyDifferences(db: Db, programId: number, range: DayRange): Promise<Difference[]> {
  const monday = (d: string) => db`${d}::date - extract(isodow from ${d}::date)::int + 1`;
  const from = range.first === null ? db`` : db`and week >= ${monday(range.first)}`;
  const to = range.last === null ? db`` : db`and week <= ${monday(range.last)}`;
  const rows = await db<Record<string, string | null>[]>`
    with d as (
      select day - extract(isodow from day)::int + 1 as week, dimension, key, sum(clicks) as clicks,
             sum(leads) as leads, sum(conversions) as conversions, sum(sales) as sales,
             sum(revenue_cents) as revenue_cents, sum(commission_cents) as commission_cents
      from program_daily_breakdown where program_id = ${programId}
      group by 1, 2, 3
    ), w as (
      select week, dimension, key, clicks, leads, conversions, sales, revenue_cents, commission_cents
      from program_weekly_breakdown where program_id = ${programId}
    )
    select week::text as day, dimension, key,
           w.clicks::text as w_clicks, w.leads::text as w_leads, w.conversions::text as w_conversions,
           w.sales::text as w_sales, w.revenue_cents::text as w_revenue_cents,
           w.commission_cents::text as w_commission_cents,
           d.clicks::text as d_clicks, d.leads::text as d_leads, d.conversions::text as d_conversions,
           d.sales::text as d_sales, d.revenue_cents::text as d_revenue_cents,
           d.commission_cents::text as d_commission_cents
    from w full join d using (week, dimension, key)
    where true ${from} ${to}
      and (w.clicks, w.leads, w.conversions, w.sales, w.revenue_cents, w.commission_cents) is distinct from
          (d.clicks, d.leads, d.conversions, d.sales, d.revenue_cents, d.commission_cents)`;
  const counters = (r: Record<string, string | null>, p: string): Counters => {
    const c = zero();
    for (const k of FIELDS) c[k] = Number(r[`${p}${k}`] ?? 0);
    return c;
  };
  return rows.map((r) => ({
    programId,
    day: r.day!,
    dimension: r.dimension as Dimension,
    key: r.key!,
    rollup: counters(r, 'w_'),
    raw: counters(r, 'd_'),
    problem: 'weekly row differs from the sum of its days',
  }));
}

/** One line per difference, for people. */
export function describe(d: Difference): string {
  const fields = FIELDS.filter((c) => d.rollup[c] !== d.raw[c])
    .map((c) => `${c} ${d.rollup[c]} (raw ${d.raw[c]})`)
    .join(', ');
  return `program ${d.programId} ${d.day} ${d.dimension}${d.key === '' ? '' : ` ${JSON.stringify(d.key)}`}: ${d.problem}${fields ? `: ${fields}` : ''}`;
}

// ---------------------------------------------------------------------------------------------------
// The rebuild

/**
 * Sets the visit keys of the program's customers that have a click but no keys yet (created before
 * 0014_rollups.sql) from their first click event; `batch` customers per transaction. Returns how many.
 */
export async function fillCustomerKeys(sql: Sql, programId: number, batch = 5000): Promise<number> {
  const keys = visitKeySql('f');
  const set = VISIT_DIMENSIONS.map((d) => `${ATTR_COLUMNS[d]} = ${keys[d]}`).join(', ');
  let total = 0;
  for (;;) {
    const done = await sql`
      update customers c set ${sql.unsafe(set)}
      from (select c2.id, f.* from customers c2
            cross join lateral (
              select e.geo_country, e.device_type, e.browser_name, e.device_os, e.referrer_url, e.page_url
              from click_events e where e.click_id = c2.click_id and e.program_id = c2.program_id and not e.is_test
              order by e.click_timestamp, e.event_id limit 1) f
            where c2.program_id = ${programId} and c2.click_id is not null and c2.attr_country is null
            limit ${batch}) f
      where c.id = f.id`;
    total += done.count;
    if (done.count < batch) return total;
  }
}

/**
 * The day's week in program_weekly_breakdown, written again as the sum of its days in
 * program_daily_breakdown. The caller holds the program_daily_stats rows of all seven days (lockWeek), so
 * no worker writes any day of the week meanwhile: the sum is exact, and a weekly row that was wrong itself
 * is put right too.
 */
async function rebuildWeek(tx: Tx, programId: number, day: string) {
  const monday = tx`${day}::date - extract(isodow from ${day}::date)::int + 1`;
  await tx`delete from program_weekly_breakdown where program_id = ${programId} and week = ${monday}`;
  await tx`
    insert into program_weekly_breakdown (program_id, dimension, week, key, clicks, leads, conversions, sales,
                                          revenue_cents, commission_cents)
    select program_id, dimension, ${monday}, key, sum(clicks), sum(leads), sum(conversions), sum(sales),
           sum(revenue_cents), sum(commission_cents)
    from program_daily_breakdown
    where program_id = ${programId} and day between ${monday} and ${monday} + 6
    group by program_id, dimension, key
    order by dimension, key`;
}

/**
 * Locks the program_daily_stats rows of the seven days of `day`'s week (created, zero, where missing), in
 * day order as every worker locks them: from here to the commit, nobody else writes those days' rollups.
 */
async function lockWeek(tx: Tx, programId: number, day: string) {
  const monday = tx`${day}::date - extract(isodow from ${day}::date)::int + 1`;
  await tx`insert into program_daily_stats (program_id, day)
           select ${programId}, d::date from generate_series(${monday}, ${monday} + 6, interval '1 day') d
           on conflict do nothing`;
  await tx`select 1 from program_daily_stats
           where program_id = ${programId} and day between ${monday} and ${monday} + 6
           order by day for no key update`;
}

/**
 * Rewrites one program's day of program_daily_breakdown from the raw events, and its week's rows of
 * program_weekly_breakdown from the days, in one transaction that first locks the program_daily_stats rows
 * of the week's days, as every worker does before it writes a day's breakdown: a worker's chunk committed
 * before is in the raw events read here, one committed after adds its own delta. So it is safe while the
 * workers run. `after` runs in the same transaction (the resumable cursor).
 */
export async function rebuildDay(
  sql: Sql,
  programId: number,
  day: string,
  after?: (tx: Tx) => Promise<unknown>,
): Promise<number> {
  return sql.begin(async (tx) => {
    await lockWeek(tx, programId, day);
    const rows = capKeys(await rawBreakdown(tx, programId, { first: day, last: day }, 'stored'));
    await tx`delete from program_daily_breakdown where program_id = ${programId} and day = ${day}::date`;
    if (rows.length > 0) {
      const col = <K extends keyof KeyRow>(k: K) => rows.map((r) => r[k]);
      await tx`
        insert into program_daily_breakdown (program_id, dimension, day, key, clicks, leads, conversions, sales,
                                             revenue_cents, commission_cents)
        select ${programId}, * from unnest(${col('dimension')}::text[], ${col('day')}::date[], ${col('key')}::text[],
                                           ${col('clicks')}::bigint[], ${col('leads')}::bigint[],
                                           ${col('conversions')}::bigint[], ${col('sales')}::bigint[],
                                           ${col('revenue_cents')}::bigint[], ${col('commission_cents')}::bigint[])`;
    }
    await rebuildWeek(tx, programId, day);
    if (after) await after(tx);
    return rows.length;
  });
}

/**
 * The days of a program worth rebuilding in the range, oldest first: those with a program_daily_stats row
 * that counts something (every day with an event has one; a rebuild leaves zero rows on the other days of
 * the weeks it locked) or a breakdown row.
 */
export async function programDays(db: Db, programId: number, range: DayRange): Promise<string[]> {
  const where = db`${range.first === null ? db`` : db`and day >= ${range.first}::date`}
                   ${range.last === null ? db`` : db`and day <= ${range.last}::date`}`;
  const rows = await db<{ day: string }[]>`
    select day::text as day from program_daily_stats where program_id = ${programId} ${where}
      and (clicks, leads, conversions, sales, revenue_cents, commission_cents) <> (0, 0, 0, 0, 0, 0)
    union
    select distinct day::text from program_daily_breakdown where program_id = ${programId} ${where}
    order by 1`;
  return rows.map((r) => r.day);
}

/** Rebuilds every day of a program in the range (fills its customers' keys first); for tests and seeds. */
export async function rebuildProgram(
  sql: Sql,
  programId: number,
  range: DayRange = { first: null, last: null },
) {
  await fillCustomerKeys(sql, programId);
  for (const day of await programDays(sql, programId, range)) await rebuildDay(sql, programId, day);
}

export { DIMENSIONS };
