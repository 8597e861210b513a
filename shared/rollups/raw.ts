// The rollups computed from the raw events, in plain SQL: what `npm run rollups -- --rebuild` writes and
// what `--check` (and bench:dashboard, and the tests) compare the workers' rows with.
//
// The raw definition, per UTC day (the one program_daily_stats has always had):
//   clicks       non-test human click events (quality 'human': bots and prefetches are counted nowhere),
//                under their own partner, link and visit keys;
//   leads        non-test lead events;
//   conversions  customers whose first_purchase_date is that day;
//   sales        non-test sales, and their revenue;
//   commission   the commissions of those sales, on the sale's day (a refund changes neither: the
//                rollups count what was earned that day, as they always have).
// Leads, sales and commission count under the partner and link their lead or sale recorded (partner_key,
// link_key, 0025: the customer's when it was recorded, which a partner code may have changed since), else
// (rows from before 0025, seeded rows) their customer's; a conversion under its customer's first sale's. All
// count under the visit keys of the customer's attributing click: its first non-test click event (click
// time, then event id). A customer without a click counts under `unknown`.
// The rollups' rows as written (storedBreakdown) and the workers' key cap (capKeys) are here too: the check
// (check.ts) compares them, the rebuild (rebuild.ts) writes the capped raw rows.
import type { Sql, Tx } from '../db/sql.ts';
import {
  ATTR_COLUMNS,
  KEYS_PER_DAY,
  OTHER_KEY,
  FIELDS,
  UNKNOWN_KEY,
  VISIT_DIMENSIONS,
  visitKeySql,
} from './rules.ts';
import type { Dimension } from './rules.ts';

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

export const zero = (): Counters => ({
  clicks: 0,
  leads: 0,
  conversions: 0,
  sales: 0,
  revenue_cents: 0,
  commission_cents: 0,
});
export const add = (a: Counters, b: Counters): void => {
  for (const c of FIELDS) a[c] += b[c];
};
export const equal = (a: Counters, b: Counters): boolean => FIELDS.every((c) => a[c] === b[c]);
export const isZero = (a: Counters): boolean => FIELDS.every((c) => a[c] === 0);

export type Db = Sql | Tx;

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
  // An event's keys: the partner and link it recorded, else its customer's; the customer's visit keys.
  const keyCols = (e: string) =>
    [
      `coalesce(${e}.partner_key, k.partner)`,
      `coalesce(${e}.link_key, k.link)`,
      ...VISIT_DIMENSIONS.map((d) => `k.${d}`),
    ].join(', ');
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
      where e.program_id = ${programId} and not e.is_test and e.quality = 'human' and ${inRange('e.click_timestamp')}
      union all
      select (l.lead_timestamp at time zone 'UTC')::date, ${db.unsafe(keyCols('l'))}, 0, 1, 0, 0, 0, 0
      from lead_events l left join cust k on k.id = l.customer_id
      where l.program_id = ${programId} and not l.is_test and ${inRange('l.lead_timestamp')}
      union all
      select (c.first_purchase_date at time zone 'UTC')::date, ${db.unsafe(keyCols('fs'))}, 0, 0, 1, 0, 0, 0
      from customers c join cust k on k.id = c.id
      left join lateral (
        select s.partner_key, s.link_key from sales s
        where s.customer_id = c.id and not s.is_test and s.sale_date = c.first_purchase_date
        order by s.id limit 1) fs on true
      where c.program_id = ${programId} and c.customer_status = 'conversion' and ${inRange('c.first_purchase_date')}
      union all
      select (s.sale_date at time zone 'UTC')::date, ${db.unsafe(keyCols('s'))}, 0, 0, 0, 1, s.amount_cents, 0
      from sales s left join cust k on k.id = s.customer_id
      where s.program_id = ${programId} and not s.is_test and ${inRange('s.sale_date')}
      union all
      select (s.sale_date at time zone 'UTC')::date, ${db.unsafe(keyCols('s'))}, 0, 0, 0, 0, 0, m.amount_cents
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
export async function storedDaily(
  db: Db,
  programId: number,
  range: DayRange,
): Promise<Map<string, Counters>> {
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
