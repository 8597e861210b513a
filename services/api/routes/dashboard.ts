// Dashboard reads (spec 4.5-4.7, CONTRACT "Tracking decisions"): GET /api/tracking/status/:programId,
// /api/tracking/events/:programId and /api/tracking/performance/:programId. All three need a dashboard
// session (`sess_`); an `affk_` key is 401. Program visibility and permissions come from programAccess:
// a program of a workspace the user is not a member of is 404, a missing permission or an inactive
// membership 403 (status: tracking:read; events: tracking:list; performance: dashboard:view, which every
// role has, so it amounts to "active member").
//
// Decisions beyond the spec and the contract:
// - Event ids are strings (click ids are 64-bit snowflakes, beyond a JSON number's exact range).
// - Dates (events dateFrom/dateTo, performance dateFrom/dateTo) are ISO 8601: `YYYY-MM-DD` or a date-time
//   with optional seconds and fraction (up to 9 digits) and an optional `Z` / `±hh:mm` offset; no offset
//   means UTC. A date-only dateFrom means the start of that UTC day, a date-only dateTo its end (the whole
//   day is included). Both bounds are inclusive; an empty range (dateFrom after dateTo) is 400.
// - Events: eventType `all` (the default), `click`, `lead` or `conversion`; events with equal timestamps
//   are ordered by id descending, then kind. `converted`: the click's customer (by click_id), or the
//   lead's customer, has status `conversion`.
// - Performance: dateFrom and dateTo override period and must come together (only one → 400); rows are
//   whole UTC days from dateFrom's day to dateTo's day (at most 3660); meta.period is then `custom`. With
//   both dates, period is ignored (not validated). `all` runs from the program's creation day to today.
//   meta dates are the first instant of the first day and the last millisecond of the last day.
//   Trend direction compares the raw totals (up / down / stable when equal); the trend value is
//   |current - previous| / previous * 100 rounded to 1 decimal (100 when previous is 0 and current > 0).
//
// How the reads stay fast at tens of millions of events:
// - performance reads program_daily_stats (one row per program and UTC day, kept by the workers in the
//   transaction of the events it counts) and partner_programs grouped by day: O(days), not O(events).
// - events: the count and the page position come from the same daily rollup. The requested range is cut
//   into segments, newest first: whole UTC days (counts read from program_daily_stats: clicks, leads and
//   sales are exactly the non-test click, lead and sale events of that day) and at most two partial days at
//   the edges of a date-time range (counted in SQL, bounded by one day of events each). total is their
//   sum. The page is then looked up only in the segments it overlaps: segments entirely newer than the
//   page are skipped (their event count is subtracted from the offset), and so are those entirely older.
//   The remaining range is read with a UNION ALL of the three event tables, each branch in index order
//   (program_id, time desc, id desc) and limited to offset + pageSize rows, then merged, ordered and cut
//   with LIMIT/OFFSET in SQL; only the page's rows are then joined to their details. Work is bounded by
//   the events of the days the page touches, whatever the page number or the table size.
//   This relies on the rollup invariant above; the integration test checks every total against a plain
//   count of the raw rows.
// - status: partial indexes on test events (0004_dashboard_indexes.sql) make the "up to 10" counts and
//   the latest test event index lookups even when a program has millions of real events.
import type { FastifyInstance } from 'fastify';
import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../../../shared/db/sql.ts';
import { HttpError, ERROR_SCHEMA, noValidation } from '../../../shared/http/server.ts';
import { isPlainObject } from '../../../shared/json.ts';
import { programAccess } from '../access.ts';
import type { Permission, Principal, ProgramAccess } from '../access.ts';
import type { ApiDeps } from '../deps.ts';

const DAY_MS = 86_400_000;
const DAY_US = DAY_MS * 1000;
const MAX_PAGE_SIZE = 100;
const MAX_CUSTOM_DAYS = 3660;

// ---------------------------------------------------------------------------------------------------
// Dates. Instants are epoch microseconds (PostgreSQL's resolution), as plain numbers: the accepted years
// (1900-2199) stay far inside Number's exact integer range.

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+ -])(\d{2})(?::?(\d{2}))?)?)?$/;

export interface ParsedDate {
  /** Epoch microseconds, rounded down (the instant's microsecond). */
  us: number;
  /** Digits beyond microseconds were cut: the instant is after `us` (matters for a lower bound). */
  cut: boolean;
  dateOnly: boolean;
}

/** An ISO 8601 date or date-time (no offset = UTC), or null when it is not one. */
export function parseIsoDate(s: string): ParsedDate | null {
  const m = ISO_RE.exec(s);
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, oh, om] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  if (y < 1900 || y > 2199 || mo < 1 || mo > 12 || d < 1) return null;
  if (d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const h = Number(hs ?? 0);
  const mi = Number(mis ?? 0);
  const sec = Number(ss ?? 0);
  if (h > 23 || mi > 59 || sec > 59) return null;
  // A space where the offset sign goes is a "+" that a query string decoded; "-" and "+" are themselves.
  if (sign === ' ' && (z !== undefined || hs === undefined)) return null;
  let offsetMin = 0;
  if (sign !== undefined) {
    const ohn = Number(oh);
    const omn = Number(om ?? 0);
    if (ohn > 23 || omn > 59) return null;
    offsetMin = (sign === '-' ? -1 : 1) * (ohn * 60 + omn);
  }
  const digits = (frac ?? '').padEnd(9, '0');
  const micros = Number(digits.slice(0, 6));
  const cut = Number(digits.slice(6)) > 0;
  const ms = Date.UTC(y, mo - 1, d, h, mi, sec) - offsetMin * 60_000;
  return { us: ms * 1000 + micros, cut, dateOnly: hs === undefined };
}

/** A half-open instant range [lo, hi) in epoch microseconds; null = unbounded. */
interface Range {
  lo: number | null;
  hi: number | null;
}

/** dateFrom/dateTo query values → an inclusive range as [lo, hi); 400 when malformed or empty. */
function parseRange(query: Record<string, unknown>): Range {
  const one = (name: 'dateFrom' | 'dateTo'): ParsedDate | null => {
    const v = query[name];
    if (v === undefined) return null;
    const p = typeof v === 'string' ? parseIsoDate(v) : null;
    if (!p)
      throw new HttpError(
        400,
        `${name} must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)`,
      );
    return p;
  };
  const from = one('dateFrom');
  const to = one('dateTo');
  const lo = from === null ? null : from.us + (from.cut ? 1 : 0);
  // Inclusive upper bound: a date-only dateTo includes its whole day; a date-time includes its microsecond.
  const hi = to === null ? null : to.dateOnly ? to.us + DAY_US : to.us + 1;
  if (lo !== null && hi !== null && lo >= hi) throw new HttpError(400, 'dateFrom must not be after dateTo');
  return { lo, hi };
}

/** Epoch microseconds → ISO 8601 with microseconds, for SQL parameters. */
function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/** UTC day number (days since 1970-01-01) of an instant in microseconds. */
const dayOfUs = (us: number): number => Math.floor(us / DAY_US);
const dayOfMs = (ms: number): number => Math.floor(ms / DAY_MS);
const dayString = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);
const dayNumber = (s: string): number => Date.parse(`${s}T00:00:00Z`) / DAY_MS;
const dayStartIso = (day: number): string => new Date(day * DAY_MS).toISOString();
const dayEndIso = (day: number): string => new Date((day + 1) * DAY_MS - 1).toISOString();

// ---------------------------------------------------------------------------------------------------
// Query-string and path helpers

function queryOf(req: { query: unknown }): Record<string, unknown> {
  const q = isPlainObject(req.query) ? req.query : {};
  for (const [k, v] of Object.entries(q)) {
    if (Array.isArray(v)) throw new HttpError(400, `${k} must be given once`);
  }
  return q;
}

function intParam(
  query: Record<string, unknown>,
  name: string,
  dflt: number,
  min: number,
  max: number,
  message: string,
): number {
  const v = query[name];
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !/^[0-9]{1,15}$/.test(v)) throw new HttpError(400, message);
  const n = Number(v);
  if (n < min || n > max) throw new HttpError(400, message);
  return n;
}

function sessionOf(req: { principal?: Principal }): Principal {
  const p = req.principal;
  if (!p || p.kind !== 'session') throw new HttpError(401, 'A dashboard session is required');
  return p;
}

async function access(
  sql: Sql,
  req: { principal?: Principal; params: unknown },
  permission: Permission,
): Promise<ProgramAccess> {
  const p = sessionOf(req);
  const raw = isPlainObject(req.params) ? req.params.programId : undefined;
  const id = typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : 0;
  return programAccess(sql, p, id, permission);
}

// ---------------------------------------------------------------------------------------------------
// Response schemas (OpenAPI); the handlers validate by hand, with exact messages.

const err = ERROR_SCHEMA;
const errors = { 400: err, 401: err, 403: err, 404: err } as const;
const security = [{ session: [] }];
const programParams = {
  type: 'object',
  required: ['programId'],
  properties: { programId: { type: 'integer', description: 'Program id' } },
} as const;
const dateQuery = {
  type: 'string',
  description: 'ISO 8601 date (YYYY-MM-DD, a whole UTC day) or date-time (no offset = UTC); inclusive.',
} as const;

const testStats = {
  type: 'object',
  properties: {
    testEventCount: { type: 'integer', description: 'Test events found, up to 10' },
    hasTestEvents: { type: 'boolean' },
    latestTestEvent: {
      type: ['object', 'null'],
      properties: {
        id: { type: 'string' },
        timestamp: { type: 'string', format: 'date-time' },
        createdAt: { type: 'string', format: 'date-time' },
      },
    },
  },
} as const;
const stepStatus = { type: 'string', enum: ['pending', 'complete'] } as const;

const statusSchema = {
  tags: ['dashboard'],
  summary: 'Integration status: test events seen, payment-processor connection, partners',
  security,
  params: programParams,
  response: {
    200: {
      type: 'object',
      properties: {
        data: {
          type: 'object',
          properties: {
            programId: { type: 'string' },
            stepStatuses: {
              type: 'object',
              properties: { pageview: stepStatus, referrals: stepStatus, payments: stepStatus },
            },
            statistics: {
              type: 'object',
              properties: {
                pageview: testStats,
                referrals: testStats,
                payments: {
                  type: 'object',
                  properties: {
                    processorConnectionStatus: {
                      type: 'string',
                      description: 'Raw status of the connection; `not_connected` when there is none',
                    },
                    isProcessorConnected: { type: 'boolean' },
                    processorAccountId: { type: ['string', 'null'] },
                    chargesEnabled: { type: 'boolean' },
                    payoutsEnabled: { type: 'boolean' },
                    detailsSubmitted: { type: 'boolean' },
                    connectionDate: { type: ['string', 'null'], format: 'date-time' },
                  },
                },
              },
            },
            hasPartners: { type: 'boolean' },
            lastUpdated: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
    ...errors,
  },
} as const;

const eventsSchema = {
  tags: ['dashboard'],
  summary: 'Click, lead and sale (conversion) events, newest first, paginated',
  security,
  params: programParams,
  querystring: {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, default: 1 },
      pageSize: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 10 },
      eventType: { type: 'string', enum: ['all', 'click', 'lead', 'conversion'], default: 'all' },
      dateFrom: dateQuery,
      dateTo: dateQuery,
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        data: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: true,
            description:
              'click: click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, converted. lead: click_id, customer_key, session_id, page_url, converted. conversion: click_id, amount_cents, currency, sale_type, payment_status, processor_event_id, is_recurring, line_items, subscription_id, subscription_interval, product_id.',
            properties: {
              id: { type: 'string' },
              event_type: { type: 'string', enum: ['click', 'lead', 'conversion'] },
              timestamp: { type: 'string', format: 'date-time' },
              createdAt: { type: 'string', format: 'date-time' },
            },
          },
        },
        meta: {
          type: 'object',
          properties: {
            pagination: {
              type: 'object',
              properties: {
                page: { type: 'integer' },
                pageSize: { type: 'integer' },
                pageCount: { type: 'integer' },
                total: { type: 'integer' },
              },
            },
          },
        },
      },
    },
    ...errors,
  },
} as const;

const trend = {
  type: 'object',
  properties: {
    trend: { type: 'number' },
    trendDirection: { type: 'string', enum: ['up', 'down', 'stable'] },
  },
} as const;
const TREND_NAMES = [
  'clicksTrend',
  'leadsTrend',
  'conversionsTrend',
  'revenueTrend',
  'partnersTrend',
  'salesTrend',
  'commissionTrend',
] as const;

const performanceSchema = {
  tags: ['dashboard'],
  summary: 'Daily performance and totals with trends versus the previous period of equal length',
  security,
  params: programParams,
  querystring: {
    type: 'object',
    properties: {
      period: { type: 'string', enum: ['7d', '30d', '90d', 'all'], default: '7d' },
      dateFrom: { ...dateQuery, description: 'With dateTo: a custom range of whole UTC days' },
      dateTo: { ...dateQuery, description: 'With dateFrom: a custom range of whole UTC days' },
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        data: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              date: { type: 'string', format: 'date' },
              period: { type: 'string', format: 'date' },
              clicks: { type: 'integer' },
              leads: { type: 'integer' },
              conversions: { type: 'integer' },
              revenue: { type: 'number' },
              partners: { type: 'integer' },
              sales: { type: 'integer' },
              commission: { type: 'number' },
            },
          },
        },
        metrics: {
          type: 'object',
          properties: {
            totalClicks: { type: 'integer' },
            totalLeads: { type: 'integer' },
            totalConversions: { type: 'integer' },
            totalRevenue: { type: 'number' },
            conversionRate: { type: 'number' },
            averageOrderValue: { type: 'number' },
            totalPartners: { type: 'integer' },
            totalSales: { type: 'integer' },
            totalPartnersCommission: { type: 'number' },
            ...Object.fromEntries(TREND_NAMES.map((n) => [n, trend])),
          },
        },
        meta: {
          type: 'object',
          properties: {
            period: { type: 'string', enum: ['7d', '30d', '90d', 'all', 'custom'] },
            dateFrom: { type: 'string', format: 'date-time' },
            dateTo: { type: 'string', format: 'date-time' },
            previousPeriod: {
              type: 'object',
              properties: {
                dateFrom: { type: 'string', format: 'date-time' },
                dateTo: { type: 'string', format: 'date-time' },
              },
            },
          },
        },
      },
    },
    ...errors,
  },
} as const;

// ---------------------------------------------------------------------------------------------------
// Events

type Kind = 'click' | 'lead' | 'conversion';
const KINDS: readonly Kind[] = ['click', 'lead', 'conversion'];
type Counts = Record<Kind, number>;
const zero = (): Counts => ({ click: 0, lead: 0, conversion: 0 });

/** A stretch of the range, newest first in a list; its event counts are known before any row is read. */
interface Segment {
  lo: number;
  hi: number;
  counts: Counts;
}

interface EventRow extends Row {
  kind: Kind;
  id: string;
  ts: Date;
  created_at: Date;
  click_id: string | null;
  session_id: string | null;
  page_url: string | null;
  referrer_url: string | null;
  geo_country: string | null;
  geo_region: string | null;
  geo_city: string | null;
  device_type: string | null;
  device_os: string | null;
  browser_name: string | null;
  customer_key: string | null;
  converted: boolean | null;
  amount_cents: string | null;
  currency: string | null;
  sale_type: string | null;
  payment_status: string | null;
  transaction_id: string | null;
  is_recurring: boolean | null;
  line_items: unknown;
  subscription_id: string | null;
  subscription_interval: string | null;
  product_id: string | null;
}

function toEvent(r: EventRow): Record<string, unknown> {
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
  };
}

function createEventReader(sql: Sql) {
  // As text: a timestamptz parameter would go through a JS Date and lose the microseconds.
  const ts = (us: number) => sql`${isoMicros(us)}::text::timestamptz`;

  /** Non-test events of each wanted kind in [lo, hi), counted in SQL (used for partial days only). */
  async function countRange(
    programId: number,
    kinds: readonly Kind[],
    lo: number,
    hi: number,
  ): Promise<Counts> {
    const c = kinds.includes('click')
      ? sql`(select count(*) from click_events where program_id = ${programId} and not is_test
               and click_timestamp >= ${ts(lo)} and click_timestamp < ${ts(hi)})`
      : sql`0`;
    const l = kinds.includes('lead')
      ? sql`(select count(*) from lead_events where program_id = ${programId} and not is_test
               and lead_timestamp >= ${ts(lo)} and lead_timestamp < ${ts(hi)})`
      : sql`0`;
    const s = kinds.includes('conversion')
      ? sql`(select count(*) from sales where program_id = ${programId} and not is_test
               and sale_date >= ${ts(lo)} and sale_date < ${ts(hi)})`
      : sql`0`;
    const [row] = await sql<{ c: string; l: string; s: string }[]>`
      select ${c}::int8::text as c, ${l}::int8::text as l, ${s}::int8::text as s`;
    return { click: Number(row!.c), lead: Number(row!.l), conversion: Number(row!.s) };
  }

  /** The range as segments, newest first, with their counts (see the header comment). */
  async function segments(programId: number, kinds: readonly Kind[], range: Range): Promise<Segment[]> {
    const { lo, hi } = range;
    const loDay = lo === null ? null : dayOfUs(lo);
    const hiDay = hi === null ? null : dayOfUs(hi - 1);
    const loPartial = lo !== null && lo !== loDay! * DAY_US;
    const hiPartial = hi !== null && hi !== (hiDay! + 1) * DAY_US;
    const partial: Range[] = []; // newest first
    let firstWhole = loDay;
    let lastWhole = hiDay;
    if (loDay !== null && loDay === hiDay) {
      if (loPartial || hiPartial) {
        partial.push({ lo, hi });
        firstWhole = loDay + 1; // no whole day at all
      }
    } else {
      if (hiPartial) {
        partial.push({ lo: hiDay! * DAY_US, hi });
        lastWhole = hiDay! - 1;
      }
      if (loPartial) {
        partial.push({ lo, hi: (loDay! + 1) * DAY_US });
        firstWhole = loDay! + 1;
      }
    }
    const wholeRows =
      firstWhole !== null && lastWhole !== null && firstWhole > lastWhole
        ? Promise.resolve([])
        : sql<{ day: string; clicks: string; leads: string; sales: string }[]>`
            select day::text, clicks::text, leads::text, sales::text from program_daily_stats
            where program_id = ${programId}
              ${firstWhole === null ? sql`` : sql`and day >= ${dayString(firstWhole)}::text::date`}
              ${lastWhole === null ? sql`` : sql`and day <= ${dayString(lastWhole)}::text::date`}
            order by day desc`;
    const [rows, ...partialCounts] = await Promise.all([
      wholeRows,
      ...partial.map((r) => countRange(programId, kinds, r.lo!, r.hi!)),
    ]);
    const whole: Segment[] = rows.map((r) => {
      const d = dayNumber(r.day);
      return {
        lo: d * DAY_US,
        hi: (d + 1) * DAY_US,
        counts: {
          click: kinds.includes('click') ? Number(r.clicks) : 0,
          lead: kinds.includes('lead') ? Number(r.leads) : 0,
          conversion: kinds.includes('conversion') ? Number(r.sales) : 0,
        },
      };
    });
    const parts: Segment[] = partial.map((r, i) => ({ lo: r.lo!, hi: r.hi!, counts: partialCounts[i]! }));
    // Disjoint stretches, newest first; those without events are dropped.
    return [...parts, ...whole].filter((s) => KINDS.some((k) => s.counts[k] > 0)).sort((a, b) => b.lo - a.lo);
  }

  async function page(programId: number, kinds: readonly Kind[], range: Range, pageNo: number, size: number) {
    const segs = await segments(programId, kinds, range);
    const sum = (s: Segment) => s.counts.click + s.counts.lead + s.counts.conversion;
    const total = segs.reduce((a, s) => a + sum(s), 0);
    const offset = (pageNo - 1) * size;
    if (offset >= total) return { total, rows: [] as EventRow[] };

    // Skip the segments entirely newer than the page, keep those it overlaps.
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
    const lo = segs[i - 1]!.lo;
    const hi = segs[first]!.hi;
    const localOffset = offset - before;
    const n = localOffset + size;

    const branches: PendingQuery<Row[]>[] = [];
    if (counts.click > 0)
      branches.push(sql`(select 'click'::text as kind, click_timestamp as ts, event_id as id from click_events
        where program_id = ${programId} and not is_test and click_timestamp >= ${ts(lo)} and click_timestamp < ${ts(hi)}
        order by click_timestamp desc, event_id desc limit ${n})`);
    if (counts.lead > 0)
      branches.push(sql`(select 'lead'::text as kind, lead_timestamp as ts, id from lead_events
        where program_id = ${programId} and not is_test and lead_timestamp >= ${ts(lo)} and lead_timestamp < ${ts(hi)}
        order by lead_timestamp desc, id desc limit ${n})`);
    if (counts.conversion > 0)
      branches.push(sql`(select 'conversion'::text as kind, sale_date as ts, id from sales
        where program_id = ${programId} and not is_test and sale_date >= ${ts(lo)} and sale_date < ${ts(hi)}
        order by sale_date desc, id desc limit ${n})`);
    const union = branches.reduce((a, b) => sql`${a} union all ${b}`);

    const rows = await sql<EventRow[]>`
      with k as (
        select kind, ts, id from (${union}) u
        order by ts desc, id desc, kind
        limit ${size} offset ${localOffset}
      )
      select k.kind, k.id::text as id, k.ts,
             coalesce(c.created_at, l.created_at, s.created_at) as created_at,
             coalesce(c.click_id, l.click_id, s.click_id) as click_id,
             coalesce(c.session_id, l.session_id) as session_id,
             coalesce(c.page_url, l.page_url) as page_url,
             c.referrer_url, c.geo_country, c.geo_region, c.geo_city, c.device_type, c.device_os, c.browser_name,
             l.customer_key,
             coalesce(c.converted, l.converted) as converted,
             s.amount_cents::text as amount_cents, s.currency, s.sale_type, s.payment_status, s.transaction_id,
             s.is_recurring, s.line_items, s.subscription_id, s.subscription_interval, s.product_id
      from k
      left join lateral (
        select e.created_at, e.click_id, e.session_id, e.page_url, e.referrer_url, e.geo_country, e.geo_region,
               e.geo_city, e.device_type, e.device_os, e.browser_name,
               coalesce(cu.customer_status = 'conversion', false) as converted
        from click_events e left join customers cu on cu.click_id = e.click_id
        where k.kind = 'click' and e.program_id = ${programId} and e.click_timestamp = k.ts and e.event_id = k.id
      ) c on true
      left join lateral (
        select e.created_at, e.click_id, e.session_id, e.page_url, e.customer_key,
               coalesce(cu.customer_status = 'conversion', false) as converted
        from lead_events e left join customers cu on cu.id = e.customer_id
        where k.kind = 'lead' and e.id = k.id
      ) l on true
      left join lateral (
        select e.* from sales e where k.kind = 'conversion' and e.id = k.id
      ) s on true
      order by k.ts desc, k.id desc, k.kind`;
    return { total, rows };
  }

  return { page };
}

// ---------------------------------------------------------------------------------------------------
// Performance

const PERIOD_DAYS = { '7d': 7, '30d': 30, '90d': 90 } as const;
type Period = keyof typeof PERIOD_DAYS | 'all';

interface Totals {
  clicks: number;
  leads: number;
  conversions: number;
  sales: number;
  revenueCents: number;
  commissionCents: number;
  partners: number;
}

/** n / d * 100 rounded half up to `decimals` (n, d >= 0), computed on integers where possible. */
function percent(n: number, d: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round((n * 100 * f) / d) / f;
}

export function trendOf(current: number, previous: number): { trend: number; trendDirection: string } {
  if (previous === 0) {
    return current > 0 ? { trend: 100, trendDirection: 'up' } : { trend: 0, trendDirection: 'stable' };
  }
  return {
    trend: percent(Math.abs(current - previous), previous, 1),
    trendDirection: current > previous ? 'up' : current < previous ? 'down' : 'stable',
  };
}

// ---------------------------------------------------------------------------------------------------

export function registerDashboardRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const events = createEventReader(sql);

  app.get(
    '/api/tracking/status/:programId',
    { validatorCompiler: noValidation, schema: statusSchema },
    async (req) => {
      const acc = await access(sql, req, 'tracking:read');
      const id = acc.programId;
      const [row] = await sql<
        {
          click_n: number;
          click_id: string | null;
          click_ts: Date | null;
          click_created: Date | null;
          lead_n: number;
          lead_id: string | null;
          lead_ts: Date | null;
          lead_created: Date | null;
          pc_status: string | null;
          account_id: string | null;
          charges_enabled: boolean | null;
          payouts_enabled: boolean | null;
          details_submitted: boolean | null;
          connected_at: Date | null;
          has_partners: boolean;
        }[]
      >`
        select
          (select count(*)::int from (select 1 from click_events where program_id = ${id} and is_test limit 10) x) as click_n,
          lc.id as click_id, lc.ts as click_ts, lc.created_at as click_created,
          (select count(*)::int from (select 1 from lead_events where program_id = ${id} and is_test limit 10) x) as lead_n,
          ll.id as lead_id, ll.ts as lead_ts, ll.created_at as lead_created,
          pc.status as pc_status, pc.account_id, pc.charges_enabled, pc.payouts_enabled, pc.details_submitted,
          pc.connected_at,
          exists (select 1 from partner_programs where program_id = ${id} and status = 'approved') as has_partners
        from (select 1) one
        left join lateral (
          select event_id::text as id, click_timestamp as ts, created_at from click_events
          where program_id = ${id} and is_test order by click_timestamp desc, event_id desc limit 1
        ) lc on true
        left join lateral (
          select id::text as id, lead_timestamp as ts, created_at from lead_events
          where program_id = ${id} and is_test order by lead_timestamp desc, id desc limit 1
        ) ll on true
        left join processor_connections pc on pc.workspace_id = ${acc.workspaceId}`;
      const r = row!;
      const latest = (eid: string | null, ts: Date | null, created: Date | null) =>
        eid === null ? null : { id: eid, timestamp: ts!.toISOString(), createdAt: created!.toISOString() };
      const connected = r.pc_status === 'connected';
      return {
        data: {
          programId: (req.params as { programId: string }).programId,
          stepStatuses: {
            pageview: r.click_n > 0 ? 'complete' : 'pending',
            referrals: r.lead_n > 0 ? 'complete' : 'pending',
            payments: connected ? 'complete' : 'pending',
          },
          statistics: {
            pageview: {
              testEventCount: r.click_n,
              hasTestEvents: r.click_n > 0,
              latestTestEvent: latest(r.click_id, r.click_ts, r.click_created),
            },
            referrals: {
              testEventCount: r.lead_n,
              hasTestEvents: r.lead_n > 0,
              latestTestEvent: latest(r.lead_id, r.lead_ts, r.lead_created),
            },
            payments: {
              processorConnectionStatus: r.pc_status ?? 'not_connected',
              isProcessorConnected: connected,
              processorAccountId: r.account_id,
              chargesEnabled: r.charges_enabled === true,
              payoutsEnabled: r.payouts_enabled === true,
              detailsSubmitted: r.details_submitted === true,
              connectionDate: r.connected_at === null ? null : r.connected_at.toISOString(),
            },
          },
          hasPartners: r.has_partners,
          lastUpdated: new Date().toISOString(),
        },
      };
    },
  );

  app.get(
    '/api/tracking/events/:programId',
    { validatorCompiler: noValidation, schema: eventsSchema },
    async (req) => {
      const acc = await access(sql, req, 'tracking:list');
      const q = queryOf(req);
      const pageNo = intParam(
        q,
        'page',
        1,
        1,
        Number.MAX_SAFE_INTEGER,
        'page must be an integer of at least 1',
      );
      const size = intParam(
        q,
        'pageSize',
        10,
        1,
        MAX_PAGE_SIZE,
        `pageSize must be an integer between 1 and ${MAX_PAGE_SIZE}`,
      );
      const et = q.eventType ?? 'all';
      if (et !== 'all' && !(KINDS as readonly unknown[]).includes(et)) {
        throw new HttpError(400, 'eventType must be one of click, lead, conversion (or all)');
      }
      const kinds = et === 'all' ? KINDS : [et as Kind];
      const range = parseRange(q);
      const { total, rows } = await events.page(acc.programId, kinds, range, pageNo, size);
      return {
        data: rows.map(toEvent),
        meta: { pagination: { page: pageNo, pageSize: size, pageCount: Math.ceil(total / size), total } },
      };
    },
  );

  app.get(
    '/api/tracking/performance/:programId',
    { validatorCompiler: noValidation, schema: performanceSchema },
    async (req) => {
      const acc = await access(sql, req, 'dashboard:view');
      const q = queryOf(req);
      const today = dayOfMs(Date.now());
      let period: Period | 'custom';
      let first: number;
      let last: number;
      if (q.dateFrom !== undefined || q.dateTo !== undefined) {
        if (q.dateFrom === undefined || q.dateTo === undefined) {
          throw new HttpError(400, 'dateFrom and dateTo must be given together');
        }
        const range = parseRange(q);
        period = 'custom';
        first = dayOfUs(range.lo!);
        last = dayOfUs(range.hi! - 1);
        if (last - first + 1 > MAX_CUSTOM_DAYS) {
          throw new HttpError(400, `The date range must not exceed ${MAX_CUSTOM_DAYS} days`);
        }
      } else {
        const p = q.period ?? '7d';
        if (p !== 'all' && !(typeof p === 'string' && Object.hasOwn(PERIOD_DAYS, p))) {
          throw new HttpError(400, 'period must be one of 7d, 30d, 90d, all');
        }
        period = p as Period;
        last = today;
        if (period === 'all') {
          const [pr] = await sql<
            { created_at: Date }[]
          >`select created_at from programs where id = ${acc.programId}`;
          first = Math.min(today, dayOfMs(pr!.created_at.getTime()));
        } else {
          first = today - PERIOD_DAYS[period] + 1;
        }
      }
      const days = last - first + 1;
      const prevFirst = first - days;
      const prevLast = first - 1;

      const [stats, partners] = await Promise.all([
        sql<
          {
            day: string;
            clicks: string;
            leads: string;
            conversions: string;
            sales: string;
            revenue_cents: string;
            commission_cents: string;
          }[]
        >`
          select day::text, clicks::text, leads::text, conversions::text, sales::text, revenue_cents::text,
                 commission_cents::text
          from program_daily_stats
          where program_id = ${acc.programId} and day between ${dayString(prevFirst)}::text::date and ${dayString(last)}::text::date`,
        sql<{ day: string; n: string }[]>`
          select (created_at at time zone 'UTC')::date::text as day, count(*)::text as n
          from partner_programs
          where program_id = ${acc.programId}
            and created_at >= ${dayStartIso(prevFirst)}::text::timestamptz and created_at < ${dayStartIso(last + 1)}::text::timestamptz
          group by 1`,
      ]);
      const byDay = new Map(stats.map((s) => [dayNumber(s.day), s]));
      const partnersByDay = new Map(partners.map((p) => [dayNumber(p.day), Number(p.n)]));
      const totals = (from: number, to: number): Totals => {
        const t: Totals = {
          clicks: 0,
          leads: 0,
          conversions: 0,
          sales: 0,
          revenueCents: 0,
          commissionCents: 0,
          partners: 0,
        };
        for (const [d, s] of byDay) {
          if (d < from || d > to) continue;
          t.clicks += Number(s.clicks);
          t.leads += Number(s.leads);
          t.conversions += Number(s.conversions);
          t.sales += Number(s.sales);
          t.revenueCents += Number(s.revenue_cents);
          t.commissionCents += Number(s.commission_cents);
        }
        for (const [d, n] of partnersByDay) if (d >= from && d <= to) t.partners += n;
        return t;
      };

      const data = [];
      for (let d = first; d <= last; d++) {
        const s = byDay.get(d);
        const date = dayString(d);
        data.push({
          date,
          period: date,
          clicks: Number(s?.clicks ?? 0),
          leads: Number(s?.leads ?? 0),
          conversions: Number(s?.conversions ?? 0),
          revenue: Number(s?.revenue_cents ?? 0) / 100,
          partners: partnersByDay.get(d) ?? 0,
          sales: 0,
          commission: Number(s?.commission_cents ?? 0) / 100,
        });
      }
      const cur = totals(first, last);
      const prev = totals(prevFirst, prevLast);
      return {
        data,
        metrics: {
          totalClicks: cur.clicks,
          totalLeads: cur.leads,
          totalConversions: cur.conversions,
          totalRevenue: cur.revenueCents / 100,
          conversionRate: cur.clicks === 0 ? 0 : percent(cur.conversions, cur.clicks, 2),
          averageOrderValue: cur.conversions === 0 ? 0 : Math.round(cur.revenueCents / cur.conversions) / 100,
          totalPartners: cur.partners,
          totalSales: cur.sales,
          totalPartnersCommission: cur.commissionCents / 100,
          clicksTrend: trendOf(cur.clicks, prev.clicks),
          leadsTrend: trendOf(cur.leads, prev.leads),
          conversionsTrend: trendOf(cur.conversions, prev.conversions),
          revenueTrend: trendOf(cur.revenueCents, prev.revenueCents),
          partnersTrend: trendOf(cur.partners, prev.partners),
          salesTrend: trendOf(cur.sales, prev.sales),
          commissionTrend: trendOf(cur.commissionCents, prev.commissionCents),
        },
        meta: {
          period,
          dateFrom: dayStartIso(first),
          dateTo: dayEndIso(last),
          previousPeriod: { dateFrom: dayStartIso(prevFirst), dateTo: dayEndIso(prevLast) },
        },
      };
    },
  );
}
