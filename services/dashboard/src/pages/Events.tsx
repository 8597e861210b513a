// Clicks, leads and sales of a program, newest first (GET /api/tracking/events/:programId), with a type
// filter, a date range and pages. Times are shown in the viewer's timezone; the range is in UTC days. A bot's
// or a prefetch's click (its `quality`, docs/pipeline.md "Bots and prefetches") is listed with a badge: stored,
// counted nowhere.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { ErrorBox, GeoCredit, Loading, Pager, Table } from '../widgets.tsx';
import { PageTitle, useProgram } from '../program.tsx';
import { dateTime, money } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { ProgramPageProps } from '../program.tsx';

type EventsPage = Answer<'get', '/api/tracking/events/{programId}'>;
/**
 * An event row. Its schema names only id, event_type and the times and leaves the rest open
 * (additionalProperties, listed in its description): these are the listed fields the page reads.
 */
type EventRow = EventsPage['data'][number] & {
  click_id?: string | null;
  page_url?: string | null;
  referrer_url?: string | null;
  geo_country?: string | null;
  geo_region?: string | null;
  geo_city?: string | null;
  device_type?: string | null;
  device_os?: string | null;
  browser_name?: string | null;
  /** A click's: `human`, `bot` or `prefetch` (the last two are counted nowhere). */
  quality?: 'human' | 'bot' | 'prefetch';
  converted?: boolean;
  customer_key?: string | null;
  amount_cents?: number;
  currency?: string | null;
  sale_type?: string | null;
  payment_status?: string | null;
  processor_event_id?: string | null;
  product_id?: string | null;
};

type Kind = 'all' | 'click' | 'lead' | 'conversion';
const KINDS: { value: Kind; label: string }[] = [
  { value: 'all', label: 'All events' },
  { value: 'click', label: 'Clicks' },
  { value: 'lead', label: 'Leads' },
  { value: 'conversion', label: 'Sales' },
];
const PAGE_SIZE = 25;

export function Events(props: ProgramPageProps) {
  const program = useProgram(props.programId);
  const [filter, setFilter] = useState<{ kind: Kind; from: string; to: string }>({
    kind: 'all',
    from: '',
    to: '',
  });
  const [draft, setDraft] = useState(filter);
  const [page, setPage] = useState(1);
  const events = useLoad(
    () =>
      api.GET('/api/tracking/events/{programId}', {
        params: {
          path: { programId: props.programId },
          query: {
            page,
            pageSize: PAGE_SIZE,
            eventType: filter.kind,
            dateFrom: filter.from,
            dateTo: filter.to,
          },
        },
      }),
    [props.programId, page, filter.kind, filter.from, filter.to],
  );
  const currency = program.data?.currency ?? 'USD';

  return (
    <>
      <PageTitle title="Events" program={program.data} />
      <form
        class="toolbar"
        aria-label="Filter events"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilter(draft);
        }}
      >
        <label>
          Type
          <select
            value={draft.kind}
            onChange={(e) => setDraft({ ...draft, kind: (e.target as HTMLSelectElement).value as Kind })}
          >
            {KINDS.map((k) => (
              <option value={k.value}>{k.label}</option>
            ))}
          </select>
        </label>
        <DayField label="From" value={draft.from} set={(from) => setDraft({ ...draft, from })} />
        <DayField label="To" value={draft.to} set={(to) => setDraft({ ...draft, to })} />
        <button type="submit" class="primary">
          Apply filter
        </button>
        <button type="button" onClick={() => events.reload()}>
          Refresh
        </button>
      </form>
      {events.error ? (
        <ErrorBox error={events.error} />
      ) : !events.data ? (
        <Loading />
      ) : (
        <>
          <p class="subtle" aria-live="polite">
            {events.data.meta.pagination.total} event{events.data.meta.pagination.total === 1 ? '' : 's'}
            {events.loading ? ' (updating…)' : ''}
          </p>
          {filter.kind === 'all' || filter.kind === 'click' ? (
            <p class="subtle" data-testid="quality-note">
              Clicks marked <span class="badge filtered">bot</span> (a crawler or a link preview) or{' '}
              <span class="badge filtered">prefetch</span> (a browser fetching the link before anyone followed
              it) are listed here but counted nowhere else: not in Overview&apos;s clicks, the charts or the
              partners&apos; figures.
            </p>
          ) : null}
          {events.data.data.length === 0 ? (
            <p>No events in this range yet. The Integration page shows how to send the first ones.</p>
          ) : (
            <Table class="events" columns={['Time', 'Type', 'Details', 'Device and place']}>
              {events.data.data.map((ev) => (
                <EventLine ev={ev as EventRow} currency={currency} key={`${ev.event_type}-${ev.id}`} />
              ))}
            </Table>
          )}
          <Pager
            page={events.data.meta.pagination.page}
            pageCount={events.data.meta.pagination.pageCount}
            onPage={setPage}
          />
          {events.data.data.some((e) => e.event_type === 'click') && <GeoCredit />}
        </>
      )}
    </>
  );
}

const TYPE_LABEL = { click: 'Click', lead: 'Lead', conversion: 'Sale' } as const;

function EventLine(props: { ev: EventRow; currency: string }) {
  const ev = props.ev;
  let details;
  let place = '';
  if (ev.event_type === 'click') {
    details = (
      <>
        {ev.page_url ? <span class="url">{ev.page_url}</span> : 'No page URL'}
        {ev.referrer_url && <span class="subtle"> from {ev.referrer_url}</span>}
        <ClickId id={ev.click_id} />
        {ev.quality === 'bot' || ev.quality === 'prefetch' ? (
          <>
            {' '}
            <span
              class="badge filtered"
              data-testid="quality"
              title={
                ev.quality === 'bot'
                  ? 'A crawler or a link preview: listed, not counted'
                  : "A browser's prefetch, before anyone followed the link: listed, not counted"
              }
            >
              {ev.quality}
            </span>
          </>
        ) : null}
        {ev.converted && (
          <>
            {' '}
            <span class="badge live">converted</span>
          </>
        )}
      </>
    );
    const device = [ev.device_type, ev.device_os, ev.browser_name].filter(Boolean).join(' · ');
    const geo = [ev.geo_city, ev.geo_region, ev.geo_country].filter(Boolean).join(', ');
    place = [device || 'Unknown device', geo || 'Unknown place'].join(' — ');
  } else if (ev.event_type === 'lead') {
    details = (
      <>
        Customer <code>{ev.customer_key ?? '—'}</code>
        <ClickId id={ev.click_id} />
        {ev.converted && (
          <>
            {' '}
            <span class="badge live">converted</span>
          </>
        )}
      </>
    );
  } else {
    details = (
      <>
        {money(ev.amount_cents ?? 0, ev.currency ?? props.currency)}
        {ev.sale_type === 'subscription' ? ' subscription' : ''}
        {ev.payment_status && ev.payment_status !== 'paid' ? ` (${ev.payment_status})` : ''}
        {ev.product_id && <span class="subtle"> product {ev.product_id}</span>}
        {ev.processor_event_id && (
          <span class="subtle">
            {' '}
            · <code>{ev.processor_event_id}</code>
          </span>
        )}
      </>
    );
  }
  return (
    <tr>
      <td data-label="Time">
        <time dateTime={ev.timestamp}>{dateTime(ev.timestamp)}</time>
      </td>
      <td data-label="Type">
        <span class={`kind ${ev.event_type}`}>{TYPE_LABEL[ev.event_type]}</span>
      </td>
      <td data-label="Details">{details}</td>
      <td data-label="Device and place">{place}</td>
    </tr>
  );
}

/** The click id an integrator passes from the browser to its lead and sale calls (attribution). */
function ClickId(props: { id: string | null | undefined }) {
  if (!props.id) return null;
  return (
    <span class="subtle click-id">
      {' '}
      · click_id <code>{props.id}</code>
    </span>
  );
}

/** A UTC day of the filter. */
function DayField(props: { label: string; value: string; set: (day: string) => void }) {
  return (
    <label>
      {props.label} (UTC day)
      <input
        type="date"
        value={props.value}
        onInput={(e) => props.set((e.target as HTMLInputElement).value)}
      />
    </label>
  );
}
