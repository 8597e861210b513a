// The check of the rollups against the raw events (raw.ts): what `npm run rollups -- --check`,
// bench:dashboard and the tests report. An empty list of differences means equal.
import { FIELDS, KEYS_PER_DAY, OTHER_KEY, UNKNOWN_KEY, VISIT_DIMENSIONS } from './rules.ts';
import type { Dimension } from './rules.ts';
import { add, equal, isZero, rawBreakdown, storedBreakdown, storedDaily, zero } from './raw.ts';
import type { Counters, DayRange, Db, KeyRow } from './raw.ts';

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
