// Schemas of the dashboard reads: the query schemas validate (shared/http/validation.ts; each field by the
// service's own rule, in the order of the old checks), and all of them make the OpenAPI document and
// serialise the answers. What a schema cannot state stays in service.ts: a parameter given twice (queryOf)
// and the performance query's shape (checkPerformanceShape) run before the fields, as preValidation; the
// order of dateFrom and dateTo and the custom range's length are checked by the handlers.
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../../../../shared/http/server.ts';
import { Checked, MAX_QUERY_INTEGER, StringEnum as CheckedEnum } from '../../../../shared/http/validation.ts';
import { DateTime, Nullable, Obj, StringEnum } from '../../common.ts';
import { DATE_PATTERN, dateError } from './dates.ts';
import {
  EVENT_TYPE_ERROR,
  LINK_ID_ERROR,
  MAX_PAGE_SIZE,
  PAGE_ERROR,
  PAGE_SIZE_ERROR,
  PARTNER_ID_ERROR,
  positiveError,
} from './service.ts';

const security = [{ session: [] }];
const errors = errorResponses(400, 401, 403, 404);
const params = Type.Object({ programId: Type.Integer({ description: 'Program id' }) });
const dateQuery = (name: 'dateFrom' | 'dateTo', description: string) =>
  Checked<string>({ type: 'string', pattern: DATE_PATTERN, description }, dateError(name));
const DATE_QUERY = 'ISO 8601 date (YYYY-MM-DD, a whole UTC day) or date-time (no offset = UTC); inclusive.';

const testStats = Obj({
  testEventCount: Type.Integer({ description: 'Test events found, up to 10' }),
  hasTestEvents: Type.Boolean(),
  latestTestEvent: Nullable(Obj({ id: Type.String(), timestamp: DateTime(), createdAt: DateTime() })),
});
const stepStatus = StringEnum(['pending', 'complete']);

export const statusSchema = {
  tags: ['dashboard'],
  summary: 'Integration status: test events seen, payment-processor connection, partners',
  security,
  params,
  response: {
    200: Obj({
      data: Obj({
        programId: Type.String(),
        stepStatuses: Obj({ pageview: stepStatus, referrals: stepStatus, payments: stepStatus }),
        statistics: Obj({
          pageview: testStats,
          referrals: testStats,
          payments: Obj({
            processorConnectionStatus: Type.String({
              description: 'Raw status of the connection; `not_connected` when there is none',
            }),
            isProcessorConnected: Type.Boolean(),
            processorAccountId: Nullable(Type.String()),
            chargesEnabled: Type.Boolean(),
            payoutsEnabled: Type.Boolean(),
            detailsSubmitted: Type.Boolean(),
            connectionDate: Nullable(DateTime()),
          }),
        }),
        hasPartners: Type.Boolean(),
        filteredClicks: Type.Integer({
          description:
            "The program's bot and prefetch clicks (stored, answered as any click, counted nowhere)",
        }),
        lastUpdated: DateTime(),
      }),
    }),
    ...errors,
  },
};

/** A page's `meta.pagination` (the events lists, the partner portal's lists). */
export const Pagination = Obj({
  page: Type.Integer(),
  pageSize: Type.Integer(),
  pageCount: Type.Integer(),
  total: Type.Integer(),
});

/**
 * One page of events, newest first (dashboard/events.ts `eventsBody`): the advertiser's list and the partner
 * portal's, whose items carry the fields `fields` names for each kind.
 */
export const EventsPage = (fields: string) =>
  Obj({
    data: Type.Array(
      Obj(
        {
          id: Type.String(),
          event_type: StringEnum(['click', 'lead', 'conversion']),
          timestamp: DateTime(),
          createdAt: DateTime(),
        },
        { additionalProperties: true, description: fields },
      ),
    ),
    meta: Obj({ pagination: Pagination }),
  });

export const eventsSchema = {
  tags: ['dashboard'],
  summary: 'Click, lead and sale (conversion) events, newest first, paginated',
  security,
  params,
  querystring: Obj({
    page: Checked<number>(
      { type: 'integer', minimum: 1, maximum: MAX_QUERY_INTEGER, default: 1 },
      positiveError(Number.MAX_SAFE_INTEGER, PAGE_ERROR),
    ),
    pageSize: Checked<number>(
      { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 10 },
      positiveError(MAX_PAGE_SIZE, PAGE_SIZE_ERROR),
    ),
    eventType: CheckedEnum(['all', 'click', 'lead', 'conversion'] as const, EVENT_TYPE_ERROR, {
      default: 'all',
    }),
    dateFrom: dateQuery('dateFrom', DATE_QUERY),
    dateTo: dateQuery('dateTo', DATE_QUERY),
  }),
  response: {
    200: EventsPage(
      'click: click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, quality (`human`, `bot` or `prefetch`: bots and prefetches are listed, counted nowhere), converted. lead: click_id, customer_key, session_id, page_url, converted. conversion: click_id, amount_cents, currency, sale_type, payment_status, processor_event_id, is_recurring, line_items, subscription_id, subscription_interval, product_id, coupon_code (the partner code the sale carried, docs/codes.md).',
    ),
    ...errors,
  },
};

const trend = Obj({ trend: Type.Number(), trendDirection: StringEnum(['up', 'down', 'stable']) });
const range = Obj({ dateFrom: DateTime(), dateTo: DateTime() });

/** The partnerId / linkId filters of performance (and of the breakdown). */
export const memberFilterQuery = {
  partnerId: Checked<number>(
    {
      type: 'integer',
      minimum: 1,
      maximum: MAX_QUERY_INTEGER,
      description:
        "Only this partner's clicks, its customers' leads and conversions, its sales and commission",
    },
    positiveError(Number.MAX_SAFE_INTEGER, PARTNER_ID_ERROR),
  ),
  linkId: Checked<number>(
    {
      type: 'integer',
      minimum: 1,
      maximum: MAX_QUERY_INTEGER,
      description:
        "Only this link's clicks and what its customers did (with partnerId: a link of that partner)",
    },
    positiveError(Number.MAX_SAFE_INTEGER, LINK_ID_ERROR),
  ),
};

export const performanceSchema = {
  tags: ['dashboard'],
  summary: 'Daily performance and totals with trends versus the previous period of equal length',
  description:
    'With `partnerId` and/or `linkId`, the same answer counted only for that partner or link (from the ' +
    'partner and link keys of the daily breakdown rollup); `partners` is then that partner joining the ' +
    "program. A partner or link that is not the program's, or a link that is not the partner's, is 404 " +
    '`Partner not found` / `Link not found`.',
  security,
  params,
  querystring: Obj({
    // Checked before the fields, and only without dates (checkPerformanceShape): here it is documented.
    period: Checked<string>({ type: 'string', enum: ['7d', '30d', '90d', 'all'], default: '7d' }, () => null),
    dateFrom: dateQuery('dateFrom', 'With dateTo: a custom range of whole UTC days'),
    dateTo: dateQuery('dateTo', 'With dateFrom: a custom range of whole UTC days'),
    ...memberFilterQuery,
  }),
  response: {
    200: Obj({
      data: Type.Array(
        Obj({
          date: Type.String({ format: 'date' }),
          period: Type.String({ format: 'date' }),
          clicks: Type.Integer(),
          leads: Type.Integer(),
          conversions: Type.Integer(),
          revenue: Type.Number(),
          partners: Type.Integer(),
          sales: Type.Integer(),
          commission: Type.Number(),
          filteredClicks: Type.Integer({
            description: 'Bot and prefetch clicks of the day, not in `clicks`',
          }),
        }),
      ),
      metrics: Obj({
        totalClicks: Type.Integer(),
        filteredClicks: Type.Integer({
          description: 'Bot and prefetch clicks of the period (stored, counted nowhere): not in totalClicks',
        }),
        totalLeads: Type.Integer(),
        totalConversions: Type.Integer(),
        totalRevenue: Type.Number(),
        conversionRate: Type.Number(),
        averageOrderValue: Type.Number(),
        totalPartners: Type.Integer(),
        totalSales: Type.Integer(),
        totalPartnersCommission: Type.Number(),
        clicksTrend: trend,
        leadsTrend: trend,
        conversionsTrend: trend,
        revenueTrend: trend,
        partnersTrend: trend,
        salesTrend: trend,
        commissionTrend: trend,
      }),
      meta: Obj({
        period: StringEnum(['7d', '30d', '90d', 'all', 'custom']),
        dateFrom: DateTime(),
        dateTo: DateTime(),
        previousPeriod: range,
      }),
    }),
    ...errors,
  },
};
