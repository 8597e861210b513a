// The performance read model (GET /api/tracking/performance, the partner portal's performance and the
// analytics reads' windows): the period window, totals, rates and trends of the current and previous period.
import { HttpError } from '../../../../shared/http/server.ts';
import type { Sql } from '../../../../shared/db/sql.ts';
import { parseId } from '../../common.ts';
import { dayEndIso, dayNumber, dayOfMs, dayOfUs, dayStartIso, dayString, parseRange } from './dates.ts';
import { createDashboardDal } from './dal.ts';
import type { DailyStatsRow, DashboardDal, MemberFilter } from './dal.ts';
import { MAX_CUSTOM_DAYS, PERIOD_ERROR } from './service.ts';

const PERIOD_DAYS = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type Period = keyof typeof PERIOD_DAYS | 'all';

/** The requested window: a custom range of whole days (first..last), or a named period. */
export type PerformanceQuery = { period: 'custom'; first: number; last: number } | { period: Period };

/**
 * The rules of the performance query a schema cannot state, checked before its fields: dateFrom and dateTo
 * come together, and then period is ignored; without them, period is checked.
 */
export function checkPerformanceShape(q: Record<string, unknown>): void {
  if (q.dateFrom !== undefined || q.dateTo !== undefined) {
    if (q.dateFrom === undefined || q.dateTo === undefined) {
      throw new HttpError(400, 'dateFrom and dateTo must be given together');
    }
    return;
  }
  const p = q.period ?? '7d';
  if (p !== 'all' && !(typeof p === 'string' && Object.hasOwn(PERIOD_DAYS, p))) {
    throw new HttpError(400, PERIOD_ERROR);
  }
}

export function parsePerformanceQuery(q: Record<string, unknown>): PerformanceQuery {
  checkPerformanceShape(q);
  if (q.dateFrom !== undefined || q.dateTo !== undefined) {
    const range = parseRange(q);
    const first = dayOfUs(range.lo!);
    const last = dayOfUs(range.hi! - 1);
    if (last - first + 1 > MAX_CUSTOM_DAYS) {
      throw new HttpError(400, `The date range must not exceed ${MAX_CUSTOM_DAYS} days`);
    }
    return { period: 'custom', first, last };
  }
  return { period: (q.period ?? '7d') as Period };
}

/** The days of a named period ending today; `all` starts at the program's creation day. */
export function periodDays(
  period: Period,
  today: number,
  createdDay: number,
): { first: number; last: number } {
  if (period === 'all') return { first: Math.min(today, createdDay), last: today };
  return { first: today - PERIOD_DAYS[period] + 1, last: today };
}

/** The previous period: as many days, just before. */
export function previousDays(first: number, last: number): { first: number; last: number } {
  return { first: first - (last - first + 1), last: first - 1 };
}

/** n / d * 100 rounded half up to `decimals` (n, d >= 0). */
export function percent(n: number, d: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round((n * 100 * f) / d) / f;
}

/**
 * Direction compares the raw totals (up / down / stable when equal); the value is
 * |current - previous| / previous * 100 to 1 decimal, 100 when previous is 0 and current > 0.
 */
export function trendOf(current: number, previous: number): { trend: number; trendDirection: string } {
  if (previous === 0) {
    return current > 0 ? { trend: 100, trendDirection: 'up' } : { trend: 0, trendDirection: 'stable' };
  }
  return {
    trend: percent(Math.abs(current - previous), previous, 1),
    trendDirection: current > previous ? 'up' : current < previous ? 'down' : 'stable',
  };
}

export interface DayStats {
  clicks: number;
  leads: number;
  conversions: number;
  sales: number;
  revenueCents: number;
  commissionCents: number;
  partners: number;
}

const noStats = (): DayStats => ({
  clicks: 0,
  leads: 0,
  conversions: 0,
  sales: 0,
  revenueCents: 0,
  commissionCents: 0,
  partners: 0,
});

/** Rollup rows and new-partner counts by day number. */
export function statsByDay(
  stats: DailyStatsRow[],
  partners: { day: string; n: string }[],
): Map<number, DayStats> {
  const byDay = new Map<number, DayStats>();
  const at = (d: number) => byDay.get(d) ?? byDay.set(d, noStats()).get(d)!;
  for (const s of stats) {
    const t = at(dayNumber(s.day));
    t.clicks = Number(s.clicks);
    t.leads = Number(s.leads);
    t.conversions = Number(s.conversions);
    t.sales = Number(s.sales);
    t.revenueCents = Number(s.revenue_cents);
    t.commissionCents = Number(s.commission_cents);
  }
  for (const p of partners) at(dayNumber(p.day)).partners = Number(p.n);
  return byDay;
}

export function totalsOf(byDay: Map<number, DayStats>, from: number, to: number): DayStats {
  const t = noStats();
  for (const [d, s] of byDay) {
    if (d < from || d > to) continue;
    for (const k of Object.keys(t) as (keyof DayStats)[]) t[k] += s[k];
  }
  return t;
}

/** The performance answer for days first..last, compared with the period of equal length before it. */
export function performanceBody(
  period: Period | 'custom',
  first: number,
  last: number,
  byDay: Map<number, DayStats>,
  /** Bot and prefetch clicks by day (counted nowhere else). */
  filtered: Map<number, number> = new Map(),
) {
  const prev = previousDays(first, last);
  let filteredTotal = 0;
  for (const [d, n] of filtered) if (d >= first && d <= last) filteredTotal += n;
  const data = [];
  for (let d = first; d <= last; d++) {
    const s = byDay.get(d) ?? noStats();
    const date = dayString(d);
    data.push({
      date,
      period: date,
      clicks: s.clicks,
      leads: s.leads,
      conversions: s.conversions,
      revenue: s.revenueCents / 100,
      partners: s.partners,
      sales: 0,
      commission: s.commissionCents / 100,
      filteredClicks: filtered.get(d) ?? 0,
    });
  }
  const cur = totalsOf(byDay, first, last);
  const was = totalsOf(byDay, prev.first, prev.last);
  return {
    data,
    metrics: {
      totalClicks: cur.clicks,
      filteredClicks: filteredTotal,
      totalLeads: cur.leads,
      totalConversions: cur.conversions,
      totalRevenue: cur.revenueCents / 100,
      conversionRate: cur.clicks === 0 ? 0 : percent(cur.conversions, cur.clicks, 2),
      averageOrderValue: cur.conversions === 0 ? 0 : Math.round(cur.revenueCents / cur.conversions) / 100,
      totalPartners: cur.partners,
      totalSales: cur.sales,
      totalPartnersCommission: cur.commissionCents / 100,
      clicksTrend: trendOf(cur.clicks, was.clicks),
      leadsTrend: trendOf(cur.leads, was.leads),
      conversionsTrend: trendOf(cur.conversions, was.conversions),
      revenueTrend: trendOf(cur.revenueCents, was.revenueCents),
      partnersTrend: trendOf(cur.partners, was.partners),
      salesTrend: trendOf(cur.sales, was.sales),
      commissionTrend: trendOf(cur.commissionCents, was.commissionCents),
    },
    meta: {
      period,
      dateFrom: dayStartIso(first),
      dateTo: dayEndIso(last),
      previousPeriod: { dateFrom: dayStartIso(prev.first), dateTo: dayEndIso(prev.last) },
    },
  };
}

/** The days of a performance query (first..last), today being `today` (a day number, UTC). */
export async function performanceDays(
  dal: Pick<DashboardDal, 'programCreatedAt'>,
  programId: number,
  q: PerformanceQuery,
  today: number,
): Promise<{ first: number; last: number }> {
  if (q.period === 'custom') return q;
  const created = q.period === 'all' ? dayOfMs((await dal.programCreatedAt(programId)).getTime()) : today;
  return periodDays(q.period, today, created);
}

/**
 * The performance answer (spec 4.7) of a program for `q` (parsePerformanceQuery), counting everything, or
 * with `filter` only what one partner or one link brought: their clicks, their customers' leads and
 * conversions, their sales' revenue and commission, and their own partner-program record as `partners`.
 * Same shape either way. The filter is not checked here: a partner or link that is not the program's (or
 * a link that is not the partner's) counts zeros; the callers answer those 404 first. Reads O(days).
 *
 * This is the one place performance is computed: GET /api/tracking/performance (with its partnerId /
 * linkId filters) and the partner portal's performance both call it.
 */
export async function readPerformance(
  sql: Sql,
  programId: number,
  q: PerformanceQuery,
  filter: MemberFilter = {},
  nowMs: number = Date.now(),
): Promise<ReturnType<typeof performanceBody>> {
  const dal = createDashboardDal(sql);
  const { first, last } = await performanceDays(dal, programId, q, dayOfMs(nowMs));
  const prev = previousDays(first, last);
  const [stats, partners, filteredRows] = await Promise.all([
    dal.dailyStats(programId, prev.first, last, filter),
    dal.partnersByDay(programId, prev.first, last, filter),
    dal.filteredByDay(programId, first, last, filter),
  ]);
  const filtered = new Map<number, number>();
  for (const r of filteredRows) {
    const d = dayNumber(r.day);
    filtered.set(d, (filtered.get(d) ?? 0) + Number(r.n));
  }
  return performanceBody(q.period, first, last, statsByDay(stats, partners), filtered);
}

/** The partnerId / linkId filters of a validated query (parseId: the schema let only positive integers in). */
export function memberFilterOf(q: Record<string, unknown>): MemberFilter {
  return {
    partnerId: q.partnerId === undefined ? null : parseId(q.partnerId),
    linkId: q.linkId === undefined ? null : parseId(q.linkId),
  };
}

export const PARTNER_NOT_FOUND = 'Partner not found';
export const LINK_NOT_FOUND = 'Link not found';

/** 404 unless the filter's partner and link are the program's (and the link is the partner's). */
export async function checkMemberFilter(sql: Sql, programId: number, filter: MemberFilter): Promise<void> {
  if ((filter.partnerId ?? null) === null && (filter.linkId ?? null) === null) return;
  const found = await createDashboardDal(sql).memberExists(programId, filter);
  if (!found.partner) throw new HttpError(404, PARTNER_NOT_FOUND);
  if (!found.link) throw new HttpError(404, LINK_NOT_FOUND);
}
