// The baselines of bench:dashboard: the dashboard reads' answers computed the plain way from the raw rows,
// to time the reads against and to compare every answer with.
import type { Sql } from '../../../shared/db/sql.ts';

const DAY_MS = 86_400_000;

export interface DayRow {
  date: string;
  clicks: number;
  leads: number;
  conversions: number;
  revenue: number;
  partners: number;
  commission: number;
}

/** Per-day numbers of [first, last] (UTC day numbers) and of the equal period before, from raw rows. */
export async function baselinePerformance(
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
export async function baselineEvents(
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
