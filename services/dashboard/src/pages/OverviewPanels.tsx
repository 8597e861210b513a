// The Overview's "who and where" panels: top partners and links, countries, devices (device, browser, OS),
// referrers and landing pages for the page's period (GET /api/tracking/breakdown), each a table with a
// share bar. A partner or a link can be picked to filter the Overview's totals and charts; the panels
// themselves always show the whole program (the rollups count each dimension on its own).
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer, RequestQuery } from '../api.ts';
import { ErrorBox, GeoCredit, Loading, Table } from '../widgets.tsx';
import { money, num } from '../format.ts';
import { useLoad } from '../hooks.ts';
import './overview-panels.css';

type Breakdown = Answer<'get', '/api/tracking/breakdown/{programId}'>;
type Row = Breakdown['data'][number];
type Dimension = NonNullable<
  NonNullable<RequestQuery<'get', '/api/tracking/breakdown/{programId}'>>['dimension']
>;

/** What the Overview is narrowed to: one partner or one link (the performance filters). */
export interface OverviewFilter {
  kind: 'partner' | 'link';
  id: number;
  label: string;
}

export type PeriodQuery = { period: '7d' | '30d' | '90d' | 'all' } | { dateFrom: string; dateTo: string };

const PANELS: {
  title: string;
  tabs: { dimension: Dimension; heading: string }[];
  pick?: 'partner' | 'link';
}[] = [
  { title: 'Top partners', tabs: [{ dimension: 'partner', heading: 'Partner' }], pick: 'partner' },
  { title: 'Top links', tabs: [{ dimension: 'link', heading: 'Link' }], pick: 'link' },
  { title: 'Countries', tabs: [{ dimension: 'country', heading: 'Country' }] },
  {
    title: 'Devices',
    tabs: [
      { dimension: 'device', heading: 'Device' },
      { dimension: 'browser', heading: 'Browser' },
      { dimension: 'os', heading: 'OS' },
    ],
  },
  { title: 'Referrers', tabs: [{ dimension: 'referrer', heading: 'Referrer' }] },
  { title: 'Landing pages', tabs: [{ dimension: 'landing_page', heading: 'Landing page' }] },
];
const DIMENSIONS = PANELS.flatMap((p) => p.tabs.map((t) => t.dimension));
const LIMIT = 10;

export function OverviewPanels(props: {
  programId: number;
  query: PeriodQuery;
  currency: string;
  filter: OverviewFilter | null;
  onFilter(f: OverviewFilter | null): void;
}) {
  const loaded = useLoad(async () => {
    const path = { programId: props.programId };
    const lists = await Promise.all(
      DIMENSIONS.map((dimension) =>
        api.GET('/api/tracking/breakdown/{programId}', {
          params: { path, query: { ...props.query, dimension, limit: LIMIT } },
        }),
      ),
    );
    return new Map(DIMENSIONS.map((d, i) => [d, lists[i]!]));
  }, [props.programId, JSON.stringify(props.query)]);

  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!loaded.data) return <Loading />;
  const byDimension = loaded.data;
  // Every click has exactly one key in each dimension: the partners' clicks are all of them.
  const total = (d: Dimension) => {
    const b = byDimension.get(d)!;
    return b.meta.keys <= b.data.length ? b.data.reduce((s, r) => s + r.clicks, 0) : null;
  };
  const allClicks = total('partner') ?? total('device') ?? total('os');
  return (
    <div class="panels" aria-busy={loaded.loading}>
      {PANELS.map((p) => (
        <Panel
          key={p.title}
          title={p.title}
          tabs={p.tabs}
          data={byDimension}
          allClicks={allClicks}
          currency={props.currency}
          pick={p.pick}
          filter={props.filter}
          onFilter={props.onFilter}
        />
      ))}
    </div>
  );
}

function Panel(props: {
  title: string;
  tabs: { dimension: Dimension; heading: string }[];
  data: Map<Dimension, Breakdown>;
  allClicks: number | null;
  currency: string;
  pick?: 'partner' | 'link';
  filter: OverviewFilter | null;
  onFilter(f: OverviewFilter | null): void;
}) {
  const [tab, setTab] = useState(0);
  const { dimension, heading } = props.tabs[tab]!;
  const b = props.data.get(dimension)!;
  const id = `panel-${dimension}`;
  const base = props.allClicks ?? b.data.reduce((s, r) => s + r.clicks, 0);
  return (
    <section class="panel" aria-labelledby={`${id}-title`} data-testid={`panel-${props.title}`}>
      <h2 id={`${id}-title`}>{props.title}</h2>
      {props.tabs.length > 1 && (
        <div role="tablist" aria-label={`${props.title} by`} class="tabs">
          {props.tabs.map((t, i) => (
            <button
              type="button"
              role="tab"
              id={`tab-${t.dimension}`}
              aria-selected={i === tab}
              aria-controls={id}
              onClick={() => setTab(i)}
            >
              {t.heading}
            </button>
          ))}
        </div>
      )}
      <div id={id} role={props.tabs.length > 1 ? 'tabpanel' : undefined}>
        {b.data.length === 0 ? (
          <p class="subtle">No clicks or sales in this period.</p>
        ) : (
          <Table
            caption={`${props.title}${props.tabs.length > 1 ? ` by ${heading.toLowerCase()}` : ''}`}
            hiddenCaption
            class="breakdown"
            columns={[heading, 'Clicks', 'Leads', 'Conversions', 'Revenue']}
          >
            {b.data.map((r) => (
              <tr key={r.key}>
                <th scope="row" class="bar-cell">
                  <span class="bar" aria-hidden="true" style={{ width: `${share(r.clicks, base)}%` }} />
                  <KeyLabel row={r} pick={props.pick} filter={props.filter} onFilter={props.onFilter} />
                </th>
                <td>
                  {num(r.clicks)} <span class="subtle">{share(r.clicks, base)}%</span>
                </td>
                <td>{num(r.leads)}</td>
                <td>{num(r.conversions)}</td>
                <td>{money(Math.round(r.revenue * 100), props.currency)}</td>
              </tr>
            ))}
          </Table>
        )}
        {b.meta.keys > b.data.length && (
          <p class="subtle">
            Top {b.data.length} of {num(b.meta.keys)}.
          </p>
        )}
        {dimension === 'country' && <GeoCredit />}
      </div>
    </section>
  );
}

/** Percent of the clicks, one decimal. */
function share(clicks: number, of: number): number {
  return of === 0 ? 0 : Math.round((clicks / of) * 1000) / 10;
}

function KeyLabel(props: {
  row: Row;
  pick?: 'partner' | 'link';
  filter: OverviewFilter | null;
  onFilter(f: OverviewFilter | null): void;
}) {
  const { row, pick } = props;
  const id = Number(row.key);
  if (!pick || !Number.isSafeInteger(id)) return <span class="bar-label">{row.label}</span>;
  const active = props.filter?.kind === pick && props.filter.id === id;
  return (
    <button
      type="button"
      class="linklike bar-label"
      aria-pressed={active}
      title={active ? 'Show the whole program again' : `Show only this ${pick} in the totals and charts`}
      onClick={() => props.onFilter(active ? null : { kind: pick, id, label: row.label })}
    >
      {row.label}
    </button>
  );
}
