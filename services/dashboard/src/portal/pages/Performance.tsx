// A partner's own figures in one program, per UTC day: clicks, leads, conversions and earnings (their
// commission), from GET /api/partner/programs/:id/performance (the spec's performance shape, counted only
// for this partner), as totals, two charts and a table.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { DailyChart } from '../../chart.tsx';
import { Table } from '../../widgets.tsx';
import { money, num } from '../../format.ts';
import { useLoad } from '../../hooks.ts';
import type { Answer } from '../../api.ts';
import { View } from '../parts.tsx';

type Performance = Answer<'get', '/api/partner/programs/{programId}/performance'>;
type Period = '7d' | '30d' | '90d' | 'all';
const PERIODS: { value: Period; label: string }[] = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: 'all', label: 'All time' },
];

/** The API's amounts are in the currency's main unit (the spec's shape); shown through cents. */
const cents = (units: number) => Math.round(units * 100);

export function PerformancePanel(props: { programId: number; currency: string }) {
  const [period, setPeriod] = useState<Period>('30d');
  const perf = useLoad(
    () =>
      api.GET('/api/partner/programs/{programId}/performance', {
        params: { path: { programId: props.programId }, query: { period } },
      }),
    [props.programId, period],
  );
  return (
    <section aria-labelledby="performance">
      <h2 id="performance">Your performance</h2>
      <div class="toolbar">
        <div role="group" aria-label="Period">
          {PERIODS.map((p) => (
            <button type="button" aria-pressed={period === p.value} onClick={() => setPeriod(p.value)}>
              {p.label}
            </button>
          ))}
        </div>
      </div>
      <View loaded={perf} lines={6} label="Loading your performance">
        {(r) => <Figures perf={r} currency={props.currency} stale={perf.loading} />}
      </View>
    </section>
  );
}

function Figures(props: { perf: Performance; currency: string; stale: boolean }) {
  const { perf, currency } = props;
  const m = perf.metrics;
  const days = perf.data;
  const range = `${perf.meta.dateFrom.slice(0, 10)} to ${perf.meta.dateTo.slice(0, 10)} (UTC days)`;
  const tiles = [
    { label: 'Clicks', value: num(m.totalClicks) },
    { label: 'Leads', value: num(m.totalLeads) },
    { label: 'Conversions', value: num(m.totalConversions) },
    { label: 'Earnings', value: money(cents(m.totalPartnersCommission), currency) },
    { label: 'Sales you referred', value: money(cents(m.totalRevenue), currency) },
  ];
  return (
    <div aria-busy={props.stale}>
      <p class="subtle">{range}</p>
      <ul class="tiles" aria-label="Totals">
        {tiles.map((t) => (
          <li class="tile" key={t.label}>
            <span class="tile-label">{t.label}</span>
            <span class="tile-value" data-testid={`tile-${t.label.toLowerCase().replace(/ /g, '-')}`}>
              {t.value}
            </span>
          </li>
        ))}
      </ul>
      <DailyChart
        title="Clicks, leads and conversions per day (UTC)"
        days={days}
        series={[
          { label: 'Clicks', color: '#0969da', values: days.map((d) => d.clicks) },
          { label: 'Leads', color: '#8250df', values: days.map((d) => d.leads) },
          { label: 'Conversions', color: '#1a7f37', values: days.map((d) => d.conversions) },
        ]}
        format={(v) => num(v)}
      />
      <DailyChart
        title={`Earnings per day (UTC, ${currency})`}
        days={days}
        series={[{ label: 'Earnings', color: '#bf3989', values: days.map((d) => d.commission) }]}
        format={(v) => money(cents(v), currency)}
      />
      <details class="daily">
        <summary>Daily figures as a table</summary>
        <Table
          caption={`Per UTC day, ${range}`}
          columns={['Day (UTC)', 'Clicks', 'Leads', 'Conversions', 'Earnings']}
        >
          {days.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              <td>{num(d.clicks)}</td>
              <td>{num(d.leads)}</td>
              <td>{num(d.conversions)}</td>
              <td>{money(cents(d.commission), currency)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </div>
  );
}
