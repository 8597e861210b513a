// The events read model (GET /api/tracking/events, and the partner portal's events): the query, the paging
// plan and the response body. The range is cut into segments, newest first: whole UTC days (counted by the
// daily rollup) and at most two partial days at the edges of a date-time range (counted in SQL). The page is
// then read only from the segments it overlaps.
import { HttpError } from '../../../../shared/http/server.ts';
import { DAY_US, dayNumber, dayOfUs, parseRange } from './dates.ts';
import type { Range } from './dates.ts';
import type { Counts, DashboardDal, EventRow, Kind, PageWindow } from './dal.ts';
import {
  EVENT_TYPE_ERROR,
  KINDS,
  MAX_PAGE_SIZE,
  PAGE_ERROR,
  PAGE_SIZE_ERROR,
  positiveParam,
  zero,
} from './service.ts';

export interface EventsQuery {
  page: number;
  size: number;
  kinds: readonly Kind[];
  range: Range;
}

export function parseEventsQuery(q: Record<string, unknown>): EventsQuery {
  const page = positiveParam(q, 'page', 1, Number.MAX_SAFE_INTEGER, PAGE_ERROR);
  const size = positiveParam(q, 'pageSize', 10, MAX_PAGE_SIZE, PAGE_SIZE_ERROR);
  const et = q.eventType ?? 'all';
  if (et !== 'all' && !(KINDS as readonly unknown[]).includes(et)) {
    throw new HttpError(400, EVENT_TYPE_ERROR);
  }
  const kinds = et === 'all' ? KINDS : [et as Kind];
  return { page, size, kinds, range: parseRange(q) };
}

/** A stretch of the range; its event counts are known before any row is read. */
export interface Segment {
  lo: number;
  hi: number;
  counts: Counts;
}

export interface RangeSplit {
  /** Partial days to count in SQL, newest first. */
  partial: { lo: number; hi: number }[];
  /** The whole days to read from the rollup (null bound = unbounded), or null when there are none. */
  whole: { first: number | null; last: number | null } | null;
}

/** Splits an instant range into whole UTC days and the partial days at its edges. */
export function splitRange(range: Range): RangeSplit {
  const { lo, hi } = range;
  const loDay = lo === null ? null : dayOfUs(lo);
  const hiDay = hi === null ? null : dayOfUs(hi - 1);
  const loPartial = lo !== null && lo !== loDay! * DAY_US;
  const hiPartial = hi !== null && hi !== (hiDay! + 1) * DAY_US;
  const partial: { lo: number; hi: number }[] = [];
  let first = loDay;
  let last = hiDay;
  if (loDay !== null && loDay === hiDay) {
    if (loPartial || hiPartial) {
      partial.push({ lo: lo!, hi: hi! });
      first = loDay + 1; // no whole day at all
    }
  } else {
    if (hiPartial) {
      partial.push({ lo: hiDay! * DAY_US, hi: hi! });
      last = hiDay! - 1;
    }
    if (loPartial) {
      partial.push({ lo: lo!, hi: (loDay! + 1) * DAY_US });
      first = loDay! + 1;
    }
  }
  const none = first !== null && last !== null && first > last;
  return { partial, whole: none ? null : { first, last } };
}

/** A whole day of the rollup as a segment, counting only the wanted kinds. */
export function daySegment(
  day: number,
  c: { clicks: number; leads: number; sales: number },
  kinds: readonly Kind[],
): Segment {
  return {
    lo: day * DAY_US,
    hi: (day + 1) * DAY_US,
    counts: {
      click: kinds.includes('click') ? c.clicks : 0,
      lead: kinds.includes('lead') ? c.leads : 0,
      conversion: kinds.includes('conversion') ? c.sales : 0,
    },
  };
}

/** Disjoint segments newest first, those without events dropped. */
export function orderSegments(segs: Segment[]): Segment[] {
  return segs.filter((s) => KINDS.some((k) => s.counts[k] > 0)).sort((a, b) => b.lo - a.lo);
}

const sum = (s: Segment) => s.counts.click + s.counts.lead + s.counts.conversion;

/**
 * The page's total and window: segments entirely newer than the page are skipped (their events
 * subtracted from the offset), and so are those entirely older. window null = the page is past the end.
 */
export function planPage(
  segs: Segment[],
  pageNo: number,
  size: number,
): { total: number; window: PageWindow | null } {
  const total = segs.reduce((a, s) => a + sum(s), 0);
  const offset = (pageNo - 1) * size;
  if (offset >= total) return { total, window: null };
  let i = 0;
  let before = 0;
  while (before + sum(segs[i]!) <= offset) before += sum(segs[i++]!);
  const first = i;
  let through = before;
  const counts = zero();
  while (i < segs.length && through < offset + size) {
    for (const k of KINDS) counts[k] += segs[i]!.counts[k];
    through += sum(segs[i++]!);
  }
  const localOffset = offset - before;
  return {
    total,
    window: {
      lo: segs[i - 1]!.lo,
      hi: segs[first]!.hi,
      counts,
      offset: localOffset,
      limit: localOffset + size,
    },
  };
}

/**
 * One page of events, newest first, with the total of the range; with `partnerId`, only that partner's (its
 * clicks and its customers' leads and sales: the partner portal's events).
 */
export async function readEventsPage(
  dal: DashboardDal,
  programId: number,
  q: EventsQuery,
  partnerId: number | null = null,
) {
  const split = splitRange(q.range);
  // The advertiser's list shows every click with its quality: a whole day's bots and prefetches (counted by
  // no rollup) are counted from their small index and added to the day's clicks. A partner's shows only
  // the clicks that count.
  const withFiltered = partnerId === null && split.whole !== null && q.kinds.includes('click');
  const [days, filtered, ...partialCounts] = await Promise.all([
    split.whole === null ? [] : dal.dayCounts(programId, split.whole.first, split.whole.last, partnerId),
    withFiltered ? dal.filteredByDay(programId, split.whole!.first, split.whole!.last) : [],
    ...split.partial.map((r) => dal.countRange(programId, q.kinds, r.lo, r.hi, partnerId)),
  ]);
  const byDay = new Map(days.map((d) => [d.day, { ...d }]));
  for (const f of filtered) {
    const day = dayNumber(f.day);
    const d = byDay.get(day) ?? byDay.set(day, { day, clicks: 0, leads: 0, sales: 0 }).get(day)!;
    d.clicks += Number(f.n);
  }
  const segs = orderSegments([
    ...split.partial.map((r, i) => ({ ...r, counts: partialCounts[i]! })),
    ...[...byDay.values()].map((d) => daySegment(d.day, d, q.kinds)),
  ]);
  const { total, window } = planPage(segs, q.page, q.size);
  const rows = window === null ? [] : await dal.eventRows(programId, window, q.size, partnerId);
  return { total, rows };
}

export function toEvent(r: EventRow): Record<string, unknown> {
  const base = {
    id: r.id,
    event_type: r.kind,
    timestamp: r.ts.toISOString(),
    createdAt: r.created_at.toISOString(),
  };
  if (r.kind === 'click') {
    return {
      ...base,
      click_id: r.click_id,
      session_id: r.session_id,
      page_url: r.page_url,
      referrer_url: r.referrer_url,
      geo_country: r.geo_country,
      geo_region: r.geo_region,
      geo_city: r.geo_city,
      device_type: r.device_type,
      device_os: r.device_os,
      browser_name: r.browser_name,
      quality: r.quality ?? 'human',
      converted: r.converted === true,
    };
  }
  if (r.kind === 'lead') {
    return {
      ...base,
      click_id: r.click_id,
      customer_key: r.customer_key,
      session_id: r.session_id,
      page_url: r.page_url,
      converted: r.converted === true,
    };
  }
  return {
    ...base,
    click_id: r.click_id,
    amount_cents: Number(r.amount_cents),
    currency: r.currency,
    sale_type: r.sale_type,
    payment_status: r.payment_status,
    processor_event_id: r.transaction_id,
    is_recurring: r.is_recurring,
    line_items: r.line_items ?? null,
    subscription_id: r.subscription_id,
    subscription_interval: r.subscription_interval,
    product_id: r.product_id,
    coupon_code: r.coupon_code ?? null,
  };
}

export function eventsBody(q: EventsQuery, total: number, rows: EventRow[]) {
  return {
    data: rows.map(toEvent),
    meta: { pagination: { page: q.page, pageSize: q.size, pageCount: Math.ceil(total / q.size), total } },
  };
}
