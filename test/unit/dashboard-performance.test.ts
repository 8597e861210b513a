// Performance rules: the period window, trends (percent change, arrows, zero baselines), rates and the
// totals of the current and previous period.
import t from 'tap';
import { dayNumber } from '../../services/api/modules/dashboard/dates.ts';
import {
  parsePerformanceQuery,
  percent,
  performanceBody,
  periodDays,
  previousDays,
  statsByDay,
  trendOf,
} from '../../services/api/modules/dashboard/performance.ts';

t.test('trendOf: direction from the raw totals, value to one decimal', async (t) => {
  t.same(trendOf(150, 100), { trend: 50, trendDirection: 'up' });
  t.same(trendOf(50, 100), { trend: 50, trendDirection: 'down' });
  t.same(trendOf(100, 100), { trend: 0, trendDirection: 'stable' });
  t.same(trendOf(1, 3), { trend: 66.7, trendDirection: 'down' }, 'rounded half up to 1 decimal');
  t.same(trendOf(2, 3), { trend: 33.3, trendDirection: 'down' });
  t.same(trendOf(0, 7), { trend: 100, trendDirection: 'down' });
});

t.test('trendOf: a zero baseline', async (t) => {
  t.same(trendOf(5, 0), { trend: 100, trendDirection: 'up' });
  t.same(trendOf(0, 0), { trend: 0, trendDirection: 'stable' });
});

t.test('percent rounds half up', async (t) => {
  t.equal(percent(1, 8, 2), 12.5);
  t.equal(percent(1, 3, 2), 33.33);
  t.equal(percent(2, 3, 2), 66.67);
  t.equal(percent(1, 1600, 2), 0.06, '0.0625 → 0.06');
  t.equal(percent(1, 200, 1), 0.5);
});

t.test(
  'periods: 7d is today and the 6 days before; all starts at creation; previous is as long',
  async (t) => {
    t.same(periodDays('7d', 100, 0), { first: 94, last: 100 });
    t.same(periodDays('30d', 100, 0), { first: 71, last: 100 });
    t.same(periodDays('90d', 100, 0), { first: 11, last: 100 });
    t.same(periodDays('all', 100, 40), { first: 40, last: 100 });
    t.same(periodDays('all', 100, 105), { first: 100, last: 100 }, 'a creation day after today is today');
    t.same(previousDays(94, 100), { first: 87, last: 93 });
  },
);

t.test('performance query: custom ranges and periods', async (t) => {
  t.same(parsePerformanceQuery({}), { period: '7d' });
  t.same(parsePerformanceQuery({ period: 'all' }), { period: 'all' });
  const d = dayNumber('2025-01-01');
  t.same(
    parsePerformanceQuery({ dateFrom: '2025-01-01T10:00:00Z', dateTo: '2025-01-03', period: 'nope' }),
    {
      period: 'custom',
      first: d,
      last: d + 2,
    },
    'both dates: whole days, period ignored',
  );
  t.throws(() => parsePerformanceQuery({ dateFrom: '2025-01-01' }), {
    statusCode: 400,
    message: 'dateFrom and dateTo must be given together',
  });
  t.throws(() => parsePerformanceQuery({ period: '14d' }), {
    statusCode: 400,
    message: 'period must be one of 7d, 30d, 90d, all',
  });
  t.throws(() => parsePerformanceQuery({ period: 'toString' }), {
    statusCode: 400,
    message: 'period must be one of 7d, 30d, 90d, all',
  });
  t.same(parsePerformanceQuery({ dateFrom: '2015-01-01', dateTo: '2025-01-07' }).period, 'custom');
  t.throws(() => parsePerformanceQuery({ dateFrom: '2015-01-01', dateTo: '2025-01-08' }), {
    statusCode: 400,
    message: 'The date range must not exceed 3660 days',
  });
});

t.test('performanceBody: daily rows, totals, rates and trends against the previous period', async (t) => {
  const d0 = dayNumber('2025-01-10');
  const row = (day: string, clicks: number, conversions: number, revenue: number, commission = 0) => ({
    day,
    clicks: String(clicks),
    leads: '1',
    conversions: String(conversions),
    sales: String(conversions),
    revenue_cents: String(revenue),
    commission_cents: String(commission),
  });
  const byDay = statsByDay(
    [
      row('2025-01-08', 10, 1, 1000), // previous period
      row('2025-01-10', 30, 2, 2500, 250),
      row('2025-01-11', 10, 1, 1000, 100),
    ],
    [
      { day: '2025-01-09', n: '2' },
      { day: '2025-01-11', n: '1' },
    ],
  );
  // Bot and prefetch clicks by day: the period's (d0, d0 + 1) only in the total, the day before left out.
  const filtered = new Map([
    [d0 - 1, 7],
    [d0 + 1, 4],
  ]);
  const body = performanceBody('custom', d0, d0 + 1, byDay, filtered);
  const cols = [
    'date',
    'period',
    'clicks',
    'leads',
    'conversions',
    'revenue',
    'partners',
    'sales',
    'commission',
    'filteredClicks',
  ];
  t.same(
    body.data.map((r) => cols.map((c) => r[c as keyof typeof r])),
    [
      ['2025-01-10', '2025-01-10', 30, 1, 2, 25, 0, 0, 2.5, 0],
      ['2025-01-11', '2025-01-11', 10, 1, 1, 10, 1, 0, 1, 4],
    ],
  );
  t.same(Object.keys(body.data[0]!), cols, 'exactly these fields');
  t.same(body.metrics, {
    totalClicks: 40,
    filteredClicks: 4,
    totalLeads: 2,
    totalConversions: 3,
    totalRevenue: 35,
    conversionRate: 7.5,
    averageOrderValue: 11.67,
    totalPartners: 1,
    totalSales: 3,
    totalPartnersCommission: 3.5,
    clicksTrend: { trend: 300, trendDirection: 'up' },
    leadsTrend: { trend: 100, trendDirection: 'up' },
    conversionsTrend: { trend: 200, trendDirection: 'up' },
    revenueTrend: { trend: 250, trendDirection: 'up' },
    partnersTrend: { trend: 50, trendDirection: 'down' },
    salesTrend: { trend: 200, trendDirection: 'up' },
    commissionTrend: { trend: 100, trendDirection: 'up' },
  });
  t.same(body.meta, {
    period: 'custom',
    dateFrom: '2025-01-10T00:00:00.000Z',
    dateTo: '2025-01-11T23:59:59.999Z',
    previousPeriod: { dateFrom: '2025-01-08T00:00:00.000Z', dateTo: '2025-01-09T23:59:59.999Z' },
  });
});

t.test('performanceBody: no events gives zero rates, not NaN', async (t) => {
  const body = performanceBody('7d', 100, 106, new Map());
  t.equal(body.data.length, 7);
  t.equal(body.metrics.conversionRate, 0);
  t.equal(body.metrics.averageOrderValue, 0);
  t.same(body.metrics.revenueTrend, { trend: 0, trendDirection: 'stable' });
});
