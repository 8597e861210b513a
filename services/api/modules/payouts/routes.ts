// Payouts (CONTRACT part two "Holding, reviewing and paying out"; docs/payouts.md): create a program's
// payouts (and preview them), list, read, export (PayPal, Wise, plain CSV), mark paid and cancel. Reads need
// payouts:read on the program, writes payouts:write; a payout of another workspace is 404.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import {
  Data,
  DataList,
  MAX_QUERY_INTEGER,
  Nullable,
  StringEnum,
} from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { principalOf, programAccess } from '../auth/access.ts';
import type { Permission } from '../auth/access.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, pathId, programOf, requireProgram } from '../../common.ts';
import * as dal from './dal.ts';
import { cancelPayout, createProgramPayouts, payPayout, previewRun } from './operations.ts';
import { ERR, EXPORT_FORMATS, PAYOUT_STATUSES, payoutMethodOf } from './service.ts';
import { PayoutMethodOut, PayoutView, payoutView } from '../../../../shared/views/payout.ts';
import { MAX_ROWS, exportPayouts, hasPayoutMethod } from './export.ts';

// ---- schemas ----

const MethodOut = PayoutMethodOut;
// A payout's answer is its view, as its events carry it (shared/views/payout.ts).
const PayoutOut = PayoutView;
const PreviewOut = Type.Object({
  partner_id: Type.Integer(),
  partner_name: Type.String(),
  partner_email: Type.String(),
  payout_method: MethodOut,
  has_payout_method: Type.Boolean(),
  amount_cents: Type.Integer(),
  commissions_cents: Type.Integer(),
  recovered_cents: Type.Integer(),
  currency: Type.String(),
  commission_ids: Type.Array(Type.Integer()),
  below_minimum: Type.Boolean({
    description: 'Below min_payout_cents: not paid by this run, it carries over',
  }),
});

const PartnerIds = Type.Array(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), {
  maxItems: 1000,
  description: 'Only these partners (default: every approved partner with something payable)',
  errorMessage: ERR.partnerIds,
});
const CreateBody = Type.Object({ partner_ids: Type.Optional(Nullable(PartnerIds, ERR.partnerIds)) });
const PreviewQuery = Type.Object({
  partner_id: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_QUERY_INTEGER,
      description: 'Only this partner',
      errorMessage: 'partner_id must be a positive integer',
    }),
  ),
});
const ListQuery = Type.Object({
  status: Type.Optional(StringEnum(PAYOUT_STATUSES, ERR.status)),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, errorMessage: ERR.limit })),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 999_999_999, default: 0, errorMessage: ERR.offset }),
  ),
});
const ExportQuery = Type.Object({
  format: StringEnum(EXPORT_FORMATS, ERR.format),
  status: Type.Optional(StringEnum(PAYOUT_STATUSES, ERR.status)),
});
const PayoutParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'Payout id' }) });
const MarkPaidBody = Type.Object({
  reference: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 200,
        description: 'Your reference (a PayPal batch id, a bank reference)',
        errorMessage: ERR.reference,
      }),
      ERR.reference,
    ),
  ),
});

/** How many payouts an export reads at most (PayPal's file limit is 5,000 rows). */
const EXPORT_LIMIT = 10_000;

// ---- routes ----

export function registerPayoutRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql, kafkaPrefix } = deps;
  const base = '/api/advertiser/affiliate-programs/:id/payouts';

  /** The payout's program, checked for `permission`; 404 `Payout not found` for another workspace's. */
  async function payoutAccess(req: FastifyRequest, payoutId: number, permission: Permission): Promise<void> {
    const programId = Number.isSafeInteger(payoutId) ? await dal.programOfPayout(sql, payoutId) : undefined;
    if (programId === undefined) throw new HttpError(404, ERR.notFound);
    try {
      await programAccess(sql, principalOf(req), programId, permission);
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 404) throw new HttpError(404, ERR.notFound);
      throw err;
    }
  }
  const found = <T>(row: T | undefined): T => {
    if (!row) throw new HttpError(404, ERR.notFound);
    return row;
  };
  const ops = { sql, kafkaPrefix };

  app.get(
    base,
    {
      preValidation: requireProgram(sql, 'payouts:read'),
      schema: {
        tags: ['management'],
        summary: "The program's payouts, newest first",
        description:
          'Scope payouts:read. `status` filters (pending, paid, canceled); `limit` 1..1000 (default 100), ' +
          '`offset` (default 0). Errors: 400 `' +
          ERR.status +
          '`, `' +
          ERR.limit +
          '`, `' +
          ERR.offset +
          '`.',
        security: managementSecurity,
        params: ProgramParams,
        querystring: ListQuery,
        response: { 200: DataList(PayoutOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { status, limit = 100, offset = 0 } = req.query;
      const rows = await dal.payoutsOfProgram(sql, programOf(req).programId, { status, limit, offset });
      return { data: rows.map(payoutView) };
    },
  );

  app.get(
    `${base}/preview`,
    {
      preValidation: requireProgram(sql, 'payouts:read'),
      schema: {
        tags: ['management'],
        summary: 'What creating payouts now would pay, per partner (nothing is written)',
        description:
          'Scope payouts:read. The payouts `POST …/payouts` would create now, and the partners left out ' +
          'because their amount is below min_payout_cents (`below_minimum: true`; their commissions carry ' +
          'over). `has_payout_method` is false for a partner who has set no payout method in the partner ' +
          'portal (listed in the plain CSV export with a `no payout method` flag, left out of the PayPal and ' +
          'Wise files). What is created may differ if commissions are approved, refunded or paid meanwhile.',
        security: managementSecurity,
        params: ProgramParams,
        querystring: PreviewQuery,
        response: {
          200: Type.Object({
            data: Type.Array(PreviewOut),
            meta: Type.Object({
              currency: Type.String(),
              min_payout_cents: Type.Integer(),
              total_cents: Type.Integer({ description: 'What the payouts to be created add up to' }),
            }),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const programId = programOf(req).programId;
      const program = found(await dal.programForPayouts(sql, programId));
      const partnerIds = req.query.partner_id === undefined ? null : [req.query.partner_id];
      const { payouts, belowMinimum } = await previewRun(sql, program, partnerIds);
      const partners = await dal.partnersWithMethods(sql, [
        ...payouts.map((p) => p.partner_id),
        ...belowMinimum.map((p) => p.partner_id),
      ]);
      const row = (p: (typeof payouts)[number] | (typeof belowMinimum)[number], below: boolean) => {
        const partner = partners.get(p.partner_id)!;
        const method = payoutMethodOf(partner.payout_method);
        return {
          partner_id: p.partner_id,
          partner_name: partner.name,
          partner_email: partner.email,
          payout_method: method,
          has_payout_method: hasPayoutMethod({ payout_method: method }),
          amount_cents: p.amount_cents,
          commissions_cents: p.commissions_cents,
          recovered_cents: p.recovered_cents,
          currency: program.currency,
          commission_ids: p.commission_ids,
          below_minimum: below,
        };
      };
      const data = [...payouts.map((p) => row(p, false)), ...belowMinimum.map((p) => row(p, true))].sort(
        (a, b) => a.partner_id - b.partner_id,
      );
      return {
        data,
        meta: {
          currency: program.currency,
          min_payout_cents: Number(program.min_payout_cents),
          total_cents: payouts.reduce((s, p) => s + p.amount_cents, 0),
        },
      };
    },
  );

  app.post(
    base,
    {
      preValidation: requireProgram(sql, 'payouts:write'),
      schema: {
        tags: ['management'],
        summary: 'Create payouts: one per approved partner holding all their payable commissions',
        description:
          'Scope payouts:write. One payout per approved partner of the program with payable commissions ' +
          '(`approved`, or partly refunded with something left once payable; unpaid, in no payout, not held ' +
          'for review), when its amount is at least the program’s min_payout_cents (otherwise they wait for ' +
          'a later run). amount_cents = the commissions’ amounts less their deductions (commissions_cents) ' +
          'less the clawbacks of earlier payments not yet recovered (recovered_cents), never below 0: what ' +
          'is left of a clawback carries over to later payouts. No commission is ever in two payouts, ' +
          'whatever runs concurrently (creations of one program run one at a time). `partner_ids` limits the ' +
          'run to those partners. 201 `{ data: [payout] }` (an empty list when nothing is payable); a ' +
          '`payout.created` event per payout. Errors: 400 `' +
          ERR.partnerIds +
          '`.',
        security: managementSecurity,
        params: ProgramParams,
        body: CreateBody,
        response: { 201: DataList(PayoutOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const partnerIds = req.body?.partner_ids ?? null;
      const created = await createProgramPayouts(ops, programOf(req).programId, partnerIds);
      return reply.code(201).send({ data: found(created).map(payoutView) });
    },
  );

  app.get(
    `${base}/export`,
    {
      preValidation: requireProgram(sql, 'payouts:read'),
      schema: {
        tags: ['management'],
        summary: "The program's payouts as a payment file: PayPal Payouts, Wise batch, or plain CSV",
        description:
          'Scope payouts:read. `text/csv`, the payouts of `status` (default pending). `format=paypal`: ' +
          'PayPal Payouts bulk upload, no header row; per payout whose partner chose PayPal: recipient (the ' +
          'method’s email), amount (two decimals), currency, reference `payout-<id>`, note `Affiliate payout: ' +
          '<program>`, wallet `PAYPAL` (PayPal takes 5,000 rows per file: a larger export is 400). ' +
          '`format=wise`: Wise batch payments by email, header `name,recipientEmail,paymentReference,' +
          'receiverType,amountCurrency,amount,sourceCurrency,targetCurrency`; per payout whose partner chose ' +
          'Wise: partner name, the method’s email, `Payout <id>`, PERSON (BUSINESS if the method’s details ' +
          'say `receiver_type: BUSINESS`), the program currency, amount, the program currency, the details’ ' +
          '`currency` or the program currency (Wise takes 1,000 rows per file; compare with the template your ' +
          'Wise account offers). `format=csv`: every payout with `payout_id,status,partner_id,partner_name,' +
          'partner_email,payout_method,payout_email,payout_details,amount,amount_cents,currency,' +
          'commissions_cents,recovered_cents,commission_count,created_at,paid_at,reference,flag`, flag `no ' +
          'payout method` when the partner has none. Payouts of 0 and partners without a method of the ' +
          'file’s kind are left out of the PayPal and Wise files (header `x-payouts-left-out` counts them). ' +
          'Errors: 400 `' +
          ERR.format +
          '`, `' +
          ERR.status +
          '`, `Too many payouts for one <format> file (<n>; at most <max>)`.',
        security: managementSecurity,
        params: ProgramParams,
        querystring: ExportQuery,
        response: {
          200: { description: 'The CSV file', content: { 'text/csv': { schema: { type: 'string' } } } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const programId = programOf(req).programId;
      const program = found(await dal.programForPayouts(sql, programId));
      const status = req.query.status ?? 'pending';
      const rows = await dal.payoutsOfProgram(sql, programId, { status, limit: EXPORT_LIMIT, offset: 0 });
      const payouts = rows.map(payoutView);
      const file = exportPayouts(req.query.format, payouts, program.name);
      if (req.query.format !== 'csv' && file.rows > MAX_ROWS[req.query.format]) {
        throw new HttpError(
          400,
          `Too many payouts for one ${req.query.format} file (${file.rows}; at most ${MAX_ROWS[req.query.format]})`,
        );
      }
      const name = `payouts-${programId}-${status}-${req.query.format}.csv`;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('x-payouts-left-out', String(file.left_out))
        .send(file.body);
    },
  );

  app.get(
    '/api/advertiser/payouts/:id',
    {
      schema: {
        tags: ['management'],
        summary: 'Read a payout',
        description:
          "Scope payouts:read on the payout's program. 404 `Payout not found` for one of another workspace.",
        security: managementSecurity,
        params: PayoutParams,
        response: { 200: Data(PayoutOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      await payoutAccess(req, req.params.id, 'payouts:read');
      return { data: payoutView(found(await dal.findPayout(sql, req.params.id))) };
    },
  );

  app.post(
    '/api/advertiser/payouts/:id/mark-paid',
    {
      // Before the body's 400: a caller who may not touch the payout learns nothing from it.
      preValidation: async (req) =>
        payoutAccess(req, pathId((req.params as { id?: unknown }).id), 'payouts:write'),
      schema: {
        tags: ['management'],
        summary: 'Mark a payout paid: its commissions paid, the balances reduced by what was sent',
        description:
          "Scope payouts:write on the payout's program. In ONE transaction: its commissions `paid` with " +
          'paid_at (one refunded while the payout was pending keeps its status: the money it was paid for is ' +
          'then a clawback, recovered from later payouts), the ledger entries (`commission:<id>:paid` for ' +
          'what the payout counted for each, and `payout:<id>:recovered` giving back what it recovered, so ' +
          'the balances fall by exactly amount_cents), the payout `paid` with `reference` and the partner’s ' +
          'payout method, the partner notified in-app and by mail (`payout_paid`), and the `payout.paid` and ' +
          '`commission.updated` events. Errors: 400 `' +
          ERR.reference +
          '`; 404 `Payout not found`; 409 `' +
          ERR.alreadyPaid +
          '`, `' +
          ERR.canceledCannotPay +
          '`.',
        security: managementSecurity,
        params: PayoutParams,
        body: MarkPaidBody,
        response: { 200: Data(PayoutOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const row = await payPayout(ops, req.params.id, req.body?.reference);
      return { data: payoutView(found(row)) };
    },
  );

  app.post(
    '/api/advertiser/payouts/:id/cancel',
    {
      schema: {
        tags: ['management'],
        summary: 'Cancel a pending payout: its commissions are payable again',
        description:
          "Scope payouts:write on the payout's program. Its commissions leave it (the next creation takes " +
          'them again, with the amounts and clawbacks of that moment); the payout stays listed as `canceled` ' +
          'with its commission_ids. Errors: 404 `Payout not found`; 409 `' +
          ERR.paidCannotCancel +
          '`, `' +
          ERR.alreadyCanceled +
          '`.',
        security: managementSecurity,
        params: PayoutParams,
        response: { 200: Data(PayoutOut), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req) => {
      await payoutAccess(req, req.params.id, 'payouts:write');
      return { data: payoutView(found(await cancelPayout(ops, req.params.id))) };
    },
  );
}
