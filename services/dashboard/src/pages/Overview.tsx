// A program's home: totals with their trend against the previous period of equal length, the daily charts
// (uPlot) with a table alternative, and who and where the traffic came from (OverviewPanels.tsx). Days are
// whole UTC days (GET /api/tracking/performance). Picking a partner or link in a panel narrows the totals
// and charts to it (the performance filters), with a chip to go back to the whole program.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer, RequestQuery } from '../api.ts';
import type { ProgramPageProps } from '../program.tsx';
import { ErrorBox, Loading, Table } from '../widgets.tsx';
import { PageTitle, useProgram } from '../program.tsx';
import { money, num } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { DailyChart as Chart } from '../chart.tsx';
import { OverviewPanels } from './OverviewPanels.tsx';
import type { OverviewFilter } from './OverviewPanels.tsx';

type Performance = Answer<'get', '/api/tracking/performance/{programId}'>;
type Trend = Performance['metrics']['clicksTrend'];
type Period = NonNullable<PerformanceQuery['period']>;
type PerformanceQuery = NonNullable<RequestQuery<'get', '/api/tracking/performance/{programId}'>>;
type Query = { period: Period } | { dateFrom: string; dateTo: string };
const PERIODS: { value: Period; label: string }[] = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: 'all', label: 'All time' },
];

/** The service's trend rule (services/api/modules/dashboard/performance.ts trendOf), for the derived rates. */
function trendOf(current: number, previous: number): Trend {
  if (previous === 0)
    return current > 0 ? { trend: 100, trendDirection: 'up' } : { trend: 0, trendDirection: 'stable' };
  return {
    trend: Math.round((Math.abs(current - previous) / previous) * 1000) / 10,
    trendDirection: current > previous ? 'up' : current < previous ? 'down' : 'stable',
  };
}

const cents = (units: number) => Math.round(units * 100);
const utcDay = (iso: string) => iso.slice(0, 10);

export function Overview(props: ProgramPageProps) {
  const program = useProgram(props.programId);
  const [query, setQuery] = useState<Query>({ period: '30d' });
  const [filter, setFilter] = useState<OverviewFilter | null>(null);
  const perf = useLoad(async () => {
    const path = { programId: props.programId };
    const only: PerformanceQuery | null =
      filter && (filter.kind === 'partner' ? { partnerId: filter.id } : { linkId: filter.id });
    const cur = await api.GET('/api/tracking/performance/{programId}', {
      params: { path, query: { ...query, ...only } },
    });
    // The rates' trends: the same totals for the previous period (the API gives trends for counts only).
    const prevRange = cur.meta.previousPeriod;
    const prev = await api
      .GET('/api/tracking/performance/{programId}', {
        params: {
          path,
          query: { dateFrom: utcDay(prevRange.dateFrom), dateTo: utcDay(prevRange.dateTo), ...only },
        },
      })
      .catch(() => null);
    return { cur, prev };
  }, [props.programId, JSON.stringify(query), filter?.kind, filter?.id]);
  const currency = program.data?.currency ?? 'USD';

  return (
    <>
      <PageTitle title="Overview" program={program.data} />
      <PeriodPicker query={query} onChange={setQuery} />
      {filter && <FilterChip filter={filter} onClear={() => setFilter(null)} />}
      {program.error || perf.error ? (
        <ErrorBox error={program.error ?? perf.error} />
      ) : !perf.data || !program.data ? (
        <Loading />
      ) : (
        <OverviewBody cur={perf.data.cur} prev={perf.data.prev} currency={currency} stale={perf.loading} />
      )}
      {program.data && (
        <OverviewPanels
          programId={props.programId}
          query={query}
          currency={currency}
          filter={filter}
          onFilter={setFilter}
        />
      )}
    </>
  );
}

/** What the totals and charts are narrowed to, and the way back to the whole program. */
function FilterChip(props: { filter: OverviewFilter; onClear(): void }) {
  const { kind, label } = props.filter;
  return (
    <p class="chip" role="status" data-testid="filter-chip">
      Totals and charts for {kind} <strong>{label}</strong> only{' '}
      <button
        type="button"
        onClick={props.onClear}
        aria-label={`Clear the ${kind} filter: show the whole program`}
      >
        ✕ Clear
      </button>
    </p>
  );
}

function PeriodPicker(props: { query: Query; onChange(q: Query): void }) {
  const q = props.query;
  const today = new Date().toISOString().slice(0, 10);
  const [from, setFrom] = useState('dateFrom' in q ? q.dateFrom : '');
  const [to, setTo] = useState('dateTo' in q ? q.dateTo : today);
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="toolbar">
      <div role="group" aria-label="Period">
        {PERIODS.map((p) => (
          <button
            type="button"
            aria-pressed={'period' in q && q.period === p.value}
            onClick={() => props.onChange({ period: p.value })}
          >
            {p.label}
          </button>
        ))}
      </div>
      <form
        class="range"
        aria-label="Custom range"
        onSubmit={(e) => {
          e.preventDefault();
          if (!from || !to) return setError('Choose both days of the range');
          if (from > to) return setError('The first day must not be after the last');
          setError(null);
          props.onChange({ dateFrom: from, dateTo: to });
        }}
      >
        <label>
          From (UTC day)
          <input
            type="date"
            value={from}
            max={today}
            onInput={(e) => setFrom((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          To (UTC day)
          <input type="date" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" aria-pressed={'dateFrom' in q}>
          Show range
        </button>
        <ErrorBox error={error} />
      </form>
    </div>
  );
}

function OverviewBody(props: {
  cur: Performance;
  prev: Performance | null;
  currency: string;
  stale: boolean;
}) {
  const { cur, prev, currency } = props;
  const m = cur.metrics;
  const pm = prev?.metrics;
  const days = cur.data;
  const range = `${utcDay(cur.meta.dateFrom)} to ${utcDay(cur.meta.dateTo)} (UTC days)`;
  const vs = `previous ${days.length} day${days.length === 1 ? '' : 's'}`;
  const tiles: { label: string; value: string; trend: Trend | null }[] = [
    { label: 'Clicks', value: num(m.totalClicks), trend: m.clicksTrend },
    { label: 'Leads', value: num(m.totalLeads), trend: m.leadsTrend },
    { label: 'Conversions', value: num(m.totalConversions), trend: m.conversionsTrend },
    { label: 'Revenue', value: money(cents(m.totalRevenue), currency), trend: m.revenueTrend },
    {
      label: 'Commission',
      value: money(cents(m.totalPartnersCommission), currency),
      trend: m.commissionTrend,
    },
    {
      label: 'Conversion rate',
      value: `${m.conversionRate.toFixed(2)}%`,
      trend: pm ? trendOf(m.conversionRate, pm.conversionRate) : null,
    },
    {
      label: 'Average order value',
      value: money(cents(m.averageOrderValue), currency),
      trend: pm ? trendOf(m.averageOrderValue, pm.averageOrderValue) : null,
    },
  ];
  return (
    <div aria-busy={props.stale}>
      <p class="subtle" data-testid="range">
        {range}; trends compare with the {vs}.
      </p>
      <ul class="tiles" aria-label="Totals">
        {tiles.map((t) => (
          <li class="tile" key={t.label}>
            <span class="tile-label">{t.label}</span>
            <span class="tile-value" data-testid={`tile-${t.label.toLowerCase().replace(/ /g, '-')}`}>
              {t.value}
            </span>
            {t.trend && <TrendBadge trend={t.trend} vs={vs} />}
          </li>
        ))}
      </ul>
      <Chart
        title="Clicks, leads and conversions per day (UTC)"
        days={days}
        series={[
          { label: 'Clicks', color: '#0969da', values: days.map((d) => d.clicks) },
          { label: 'Leads', color: '#8250df', values: days.map((d) => d.leads) },
          { label: 'Conversions', color: '#1a7f37', values: days.map((d) => d.conversions) },
        ]}
        format={(v) => num(v)}
      />
      <Chart
        title={`Revenue and commission per day (UTC, ${currency})`}
        days={days}
        series={[
          { label: 'Revenue', color: '#1a7f37', values: days.map((d) => d.revenue) },
          { label: 'Commission', color: '#bf3989', values: days.map((d) => d.commission) },
        ]}
        format={(v) => money(cents(v), currency)}
      />
      <details class="daily">
        <summary>Daily figures as a table</summary>
        <Table
          caption={`Per UTC day, ${range}`}
          columns={['Day (UTC)', 'Clicks', 'Leads', 'Conversions', 'Revenue', 'Commission']}
        >
          {days.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              <td>{num(d.clicks)}</td>
              <td>{num(d.leads)}</td>
              <td>{num(d.conversions)}</td>
              <td>{money(cents(d.revenue), currency)}</td>
              <td>{money(cents(d.commission), currency)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </div>
  );
}

function TrendBadge(props: { trend: Trend; vs: string }) {
  const { trend, trendDirection: dir } = props.trend;
  const arrow = dir === 'up' ? '▲' : dir === 'down' ? '▼' : '▶';
  const words = dir === 'stable' ? `unchanged from the ${props.vs}` : `${dir} ${trend}% from the ${props.vs}`;
  return (
    <span class={`trend ${dir}`} title={words}>
      <span aria-hidden="true">
        {arrow} {trend}%
      </span>
      <span class="sr-only">{words}</span>
    </span>
  );
}
