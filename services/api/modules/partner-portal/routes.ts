// The partner API (CONTRACT part two "Partners who sign in"; docs/partners.md "The partner API"): a partner
// session reads its programs, links, performance, events, commissions, payouts and payout method. Every
// route is registered in the partner-authenticated scope (services/api/app.ts); a program the account has
// not claimed a record in is 404 `Program not found`, exactly like one that does not exist.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import {
  MAX_QUERY_INTEGER,
  Nullable as NullableIn,
  StringEnum as CheckedEnum,
} from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { PolicyOut, RuleOut } from '../../../../shared/domain/policy-schema.ts';
import { TIER_METRICS, TIER_WINDOWS } from '../../../../shared/domain/tiers.ts';
import { BONUS_METRICS, BONUS_PERIODS } from '../../../../shared/domain/bonuses.ts';
import { DateTime, Nullable, Obj, StringEnum, dataOf, parseId, requireBodyObject } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { partnerOf, partnerSecurity } from '../partner-auth/access.ts';
import { insertLink, linksOfPartner } from '../links/dal.ts';
import {
  ERR as LINK_ERR,
  LINK_STATUSES,
  SHORT_LINK_RE,
  shortLinkCandidates,
  toLink,
} from '../links/service.ts';
import { createDashboardDal } from '../dashboard/dal.ts';
import { EventsPage, Pagination, eventsSchema, performanceSchema } from '../dashboard/schemas.ts';
import { eventsBody, parseEventsQuery, readEventsPage } from '../dashboard/events.ts';
import { checkPerformanceShape, parsePerformanceQuery, readPerformance } from '../dashboard/performance.ts';
import { queryOf } from '../dashboard/service.ts';
import * as dal from './dal.ts';
import type { PartnerProgramRow } from './dal.ts';
import {
  COMMISSION_STATUSES,
  ERR,
  MAX_PARTNER_LINKS,
  toPartnerCommission,
  toPartnerPayout,
  toBonusProgress,
  toPartnerProgramWithMoney,
  withoutCustomerData,
  withoutPartnerCounts,
} from './service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by requirePartnerProgram: the account's partner-program in the path's program. */
    partnerProgram?: PartnerProgramRow;
  }
}

const ProgramParams = Type.Object({ programId: Type.Integer({ description: 'Program id' }) });
const tags = ['partner'];
const security = partnerSecurity;

const ProgramOut = Obj({
  program: Obj({
    id: Type.Integer(),
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    currency: Type.String(),
    cookie_window_days: Type.Integer(),
    commission: PolicyOut,
    hold_days: Type.Integer(),
    min_payout_cents: Type.Integer(),
    partner_links: Type.Boolean({ description: 'Whether the partner may create its own links' }),
    website_url: Nullable(Type.String({ description: "The advertiser's site (docs/codes.md)" })),
    link_base_url: Nullable(
      Type.String({
        description:
          'Where full referral links point: website_url, else the first allowed origin; null: none (share the code alone)',
      }),
    ),
  }),
  partner_id: Type.Integer({ description: 'The claimed partner record in this program' }),
  status: StringEnum(['pending', 'approved', 'rejected']),
  rejection_reason: Nullable(Type.String()),
  balance_cents: Type.Integer({ description: 'The partner-program balance (sum of its ledger entries)' }),
  created_at: DateTime(),
  commission: Type.Union([PolicyOut], {
    description:
      "What this partner earns: its own policy when the advertiser set one, else its group's, else the " +
      "program's (docs/rewards.md)",
  }),
  group: Obj({ id: Type.Integer(), name: Type.String(), slug: Type.String() }, { description: 'Its group' }),
  tier: Nullable(
    Obj(
      {
        metric: StringEnum(TIER_METRICS),
        window: StringEnum(TIER_WINDOWS),
        value: Type.Integer({ description: "The partner's figure in the window now" }),
        threshold: Type.Integer(),
        next_group_name: Type.String(),
      },
      {
        description:
          "The first rule of the program's ladder up from the partner's group and its progress (null: no rule " +
          'from its group, or the advertiser locked it in its group)',
      },
    ),
  ),
  bonuses: Type.Array(
    Obj({
      id: Type.Integer(),
      name: Type.String(),
      metric: StringEnum(BONUS_METRICS),
      threshold: Type.Integer(),
      amount_cents: Type.Integer(),
      period: StringEnum(BONUS_PERIODS),
      starts_at: DateTime(),
      ends_at: DateTime(),
      value: Type.Integer({
        description: "The partner's figure in the current period (since starts_at, or this month)",
      }),
      awarded: Type.Boolean({ description: 'Its commission for the current period was made' }),
    }),
    { description: "The program's running bonuses the partner's group takes part in (docs/rewards.md)" },
  ),
  pending_cents: Type.Integer({
    description: 'Owed, still in its hold or held for review (held ones included; see held_cents)',
  }),
  held_cents: Type.Integer({ description: 'The part of pending_cents held for the advertiser’s review' }),
  approved_cents: Type.Integer({ description: 'Approved, in no payout yet: paid in the next payout' }),
  next_payable_at: Nullable(
    DateTime({ description: 'When the earliest pending, not held commission becomes payable (null: none)' }),
  ),
});
const LinkOut = Obj({
  id: Type.Integer(),
  short_link: Type.String({ description: 'The `aff` value of the referral URL' }),
  status: StringEnum(LINK_STATUSES),
  clicks: Type.Integer(),
  last_clicked: Nullable(DateTime()),
});
const pageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, errorMessage: ERR.page })),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, errorMessage: ERR.pageSize }),
  ),
};
export function registerPartnerPortalRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  /** preValidation: the account's partner-program in `:programId` (raw path text), else 404. */
  const requirePartnerProgram = async (req: FastifyRequest) => {
    const id = parseId((req.params as { programId?: unknown }).programId);
    const row = id === null ? undefined : await dal.partnerProgramOf(sql, partnerOf(req).accountId, id);
    if (!row) throw new HttpError(404, ERR.programNotFound);
    req.partnerProgram = row;
  };
  const ppOf = (req: FastifyRequest): PartnerProgramRow => {
    if (!req.partnerProgram) throw new Error('route has no requirePartnerProgram hook');
    return req.partnerProgram;
  };

  app.get(
    '/api/partner/programs',
    {
      schema: {
        tags,
        summary: 'The programs of the partner records this account has claimed',
        description:
          'Every program of every claimed record, with the record’s status in it (`pending`, `approved`, ' +
          '`rejected` with `rejection_reason`) and its partner-program balance. Deleted programs are left out. ' +
          'Its unpaid money, in the program’s currency, counts what each commission is owed: `amount_cents - ' +
          'deducted_cents` (a partial refund keeps the commission, status `refunded`, and records what it took ' +
          'back in `deducted_cents`), over the commissions in no payout and not paid. `pending_cents`: status ' +
          '`pending` (held for review included), or partly refunded and still in its hold or held; ' +
          '`held_cents`: the part of it held for review; `approved_cents`: status `approved`, or partly ' +
          'refunded past its hold and not held, i.e. what the next payout takes; `next_payable_at`: the ' +
          'earliest `payable_at` of the pending commissions not held for review (null if none).',
        security,
        response: { 200: dataOf(Type.Array(ProgramOut)), ...errorResponses(401) },
      },
    },
    async (req) => {
      const rows = await dal.programsOfAccount(sql, partnerOf(req).accountId);
      const bonuses = await dal.bonusesInProgress(
        sql,
        rows.map((r) => r.pp_id),
      );
      return {
        data: rows.map((r) => ({
          ...toPartnerProgramWithMoney(r),
          bonuses: bonuses.filter((b) => b.pp_id === r.pp_id).map(toBonusProgress),
        })),
      };
    },
  );

  app.get(
    '/api/partner/programs/:programId/links',
    {
      preValidation: requirePartnerProgram,
      schema: {
        tags,
        summary: "The partner's referral links in the program",
        description: 'A link only counts clicks while the partner is approved in the program.',
        security,
        params: ProgramParams,
        response: { 200: dataOf(Type.Array(LinkOut)), ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const pp = ppOf(req);
      const rows = await linksOfPartner(sql, Number(pp.program_id), Number(pp.partner_id));
      return { data: rows.map(toLink) };
    },
  );

  app.post(
    '/api/partner/programs/:programId/links',
    {
      preValidation: [
        requirePartnerProgram,
        requireBodyObject,
        async (req) => {
          const pp = ppOf(req);
          if (!pp.partner_links) throw new HttpError(403, ERR.linksClosed);
          if (pp.status !== 'approved') throw new HttpError(403, ERR.notApproved);
        },
      ],
      schema: {
        tags,
        summary: 'Create a referral link of the partner in the program',
        description:
          `403 \`${ERR.linksClosed}\` (the program's \`partner_links\` is off), 403 \`${ERR.notApproved}\`; ` +
          `400 \`${LINK_ERR.shortLink}\`; 409 \`${LINK_ERR.shortLinkTaken}\` (short links are unique across ` +
          `all programs), 409 \`${ERR.tooManyLinks(MAX_PARTNER_LINKS)}\`. \`short_link\` omitted: 8 random ` +
          'URL-safe characters.',
        security,
        params: ProgramParams,
        body: Type.Object({
          short_link: Type.Optional(
            NullableIn(Type.String({ pattern: SHORT_LINK_RE.source }), LINK_ERR.shortLink),
          ),
        }),
        response: { 201: dataOf(LinkOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const pp = ppOf(req);
      if ((await dal.linkCount(sql, Number(pp.pp_id))) >= MAX_PARTNER_LINKS) {
        throw new HttpError(409, ERR.tooManyLinks(MAX_PARTNER_LINKS));
      }
      for (const shortLink of shortLinkCandidates(req.body.short_link)) {
        const row = await insertLink(sql, {
          shortLink,
          programId: Number(pp.program_id),
          partnerId: Number(pp.partner_id),
          partnerProgramId: Number(pp.pp_id),
        });
        if (row) return reply.code(201).send({ data: toLink(row) });
      }
      throw new HttpError(409, LINK_ERR.shortLinkTaken);
    },
  );

  const perfQuery = performanceSchema.querystring.properties;
  app.get(
    '/api/partner/programs/:programId/performance',
    {
      preValidation: [requirePartnerProgram, async (req) => checkPerformanceShape(queryOf(req))],
      schema: {
        ...performanceSchema,
        tags,
        summary: "The partner's daily performance in the program, with totals and trends",
        description:
          'The query and answer of GET /api/tracking/performance/:programId, counting only this partner: its ' +
          "clicks, its customers' leads and conversions, its sales' revenue and its commission; `partners` " +
          "is 0. `linkId` narrows it to one of the partner's links (404 `Link not found` for any other). " +
          'Reads the per-partner daily rollup: O(days).',
        security,
        params: ProgramParams,
        querystring: Obj({
          period: perfQuery.period,
          dateFrom: perfQuery.dateFrom,
          dateTo: perfQuery.dateTo,
          linkId: perfQuery.linkId,
        }),
      },
    },
    async (req) => {
      const pp = ppOf(req);
      const query = queryOf(req);
      const q = parsePerformanceQuery(query);
      const programId = Number(pp.program_id);
      const partnerId = Number(pp.partner_id);
      const linkId = query.linkId === undefined ? null : parseId(query.linkId);
      if (linkId !== null && !(await dal.ownsLink(sql, programId, partnerId, linkId))) {
        throw new HttpError(404, ERR.linkNotFound);
      }
      return withoutPartnerCounts(await readPerformance(sql, programId, q, { partnerId, linkId }));
    },
  );

  app.get(
    '/api/partner/programs/:programId/events',
    {
      preValidation: [requirePartnerProgram, async (req) => void queryOf(req)],
      schema: {
        ...eventsSchema,
        tags,
        summary: "The partner's click, lead and sale (conversion) events, newest first, paginated",
        description:
          'The query and answer of GET /api/tracking/events/:programId for this partner: its clicks and the ' +
          "leads and sales of its customers. Never a customer's key or email.",
        security,
        params: ProgramParams,
        response: {
          ...eventsSchema.response,
          200: EventsPage(
            'click: click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city, ' +
              'device_type, device_os, browser_name, quality (always `human`: bots and prefetches are not ' +
              'listed to partners), converted. lead: click_id, session_id, page_url, converted. conversion: ' +
              'click_id, amount_cents, currency, sale_type, payment_status, processor_event_id, is_recurring, ' +
              'line_items, subscription_id, subscription_interval, product_id (no coupon_code: it may be ' +
              "another partner's code).",
          ),
        },
      },
    },
    async (req) => {
      const pp = ppOf(req);
      const q = parseEventsQuery(queryOf(req));
      const { total, rows } = await readEventsPage(
        createDashboardDal(sql),
        Number(pp.program_id),
        q,
        Number(pp.partner_id),
      );
      const body = eventsBody(q, total, rows);
      return { ...body, data: body.data.map(withoutCustomerData) };
    },
  );

  app.get(
    '/api/partner/commissions',
    {
      preValidation: async (req) => {
        // A program the account has no record in is 404, like every other partner route.
        const raw = (req.query as { program_id?: unknown }).program_id;
        const id = parseId(raw);
        if (raw !== undefined && id !== null) {
          if (!(await dal.partnerProgramOf(sql, partnerOf(req).accountId, id)))
            throw new HttpError(404, ERR.programNotFound);
        }
      },
      schema: {
        tags,
        summary: "The commissions of the account's partner records, newest first",
        description:
          '`program_id` narrows to one program (404 `Program not found` when the account has no record in ' +
          'it); `status` to one status; `page` (default 1) and `pageSize` (1..100, default 20) page through ' +
          'them. `payable_at` and `payout_id` are null until the commission is held and paid out.',
        security,
        querystring: Type.Object({
          program_id: Type.Optional(
            Type.Integer({ minimum: 1, maximum: MAX_QUERY_INTEGER, errorMessage: ERR.programId }),
          ),
          status: Type.Optional(CheckedEnum(COMMISSION_STATUSES, ERR.status)),
          ...pageQuery,
        }),
        response: {
          200: Obj({
            data: Type.Array(
              Obj({
                id: Type.Integer(),
                program_id: Type.Integer(),
                status: StringEnum(COMMISSION_STATUSES),
                amount_cents: Type.Integer(),
                deducted_cents: Type.Integer({ description: 'Taken back by refunds' }),
                currency: Type.String(),
                sale_amount_cents: Nullable(
                  Type.Integer({ description: "The sale's amount; null for a bonus" }),
                ),
                created_at: DateTime(),
                payable_at: Nullable(DateTime()),
                payout_id: Nullable(Type.Integer()),
                group_id: Nullable(Type.Integer({ description: 'The group whose terms priced it' })),
                rule: Nullable(RuleOut),
                bonus_id: Nullable(Type.Integer({ description: 'The bonus it pays (null: a sale)' })),
                coupon_code: Nullable(
                  Type.String({ description: 'The partner code that attributed the sale (docs/codes.md)' }),
                ),
                under_review: Type.Boolean({
                  description:
                    "Held for the advertiser's review (CONTRACT part three): not payable until approved; " +
                    'why is shown to the advertiser only',
                }),
              }),
            ),
            meta: Obj({ pagination: Pagination }),
          }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (req) => {
      const { program_id = null, status = null, page = 1, pageSize = 20 } = req.query;
      const { rows, total } = await dal.commissionsOfAccount(sql, partnerOf(req).accountId, {
        programId: program_id,
        status,
        limit: pageSize,
        offset: (page - 1) * pageSize,
      });
      return {
        data: rows.map(toPartnerCommission),
        meta: { pagination: { page, pageSize, pageCount: Math.ceil(total / pageSize), total } },
      };
    },
  );

  app.get(
    '/api/partner/payouts',
    {
      schema: {
        tags,
        summary: "The payouts of the account's partner records, newest first",
        description:
          'Pending and paid payouts (a canceled one is left out: its commissions are payable again). ' +
          '`amount_cents` is what is (or was) sent: the commissions less their deductions (`commissions_cents`) ' +
          'less what refunds of already-paid commissions took back (`recovered_cents`, docs/payouts.md). ' +
          '`reference` is the advertiser’s payment reference. `page` (default 1), `pageSize` (1..100, default 20).',
        security,
        querystring: Type.Object(pageQuery),
        response: {
          200: Obj({
            data: Type.Array(
              Obj({
                id: Type.Integer(),
                program_id: Type.Integer(),
                partner_id: Type.Integer(),
                amount_cents: Type.Integer(),
                commissions_cents: Type.Integer(),
                recovered_cents: Type.Integer(),
                currency: Type.String(),
                status: StringEnum(['pending', 'paid'] as const),
                commission_ids: Type.Array(Type.Integer()),
                reference: Nullable(Type.String()),
                created_at: DateTime(),
                paid_at: Nullable(DateTime()),
              }),
            ),
            meta: Obj({ pagination: Pagination }),
          }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (req) => {
      const { page = 1, pageSize = 20 } = req.query;
      const { rows, total } = await dal.payoutsOfAccount(sql, partnerOf(req).accountId, {
        limit: pageSize,
        offset: (page - 1) * pageSize,
      });
      return {
        data: rows.map(toPartnerPayout),
        meta: { pagination: { page, pageSize, pageCount: Math.ceil(total / pageSize), total } },
      };
    },
  );
}
