// Commissions (CONTRACT "Partners, links, commissions, balances" and part two "Holding, reviewing and paying
// out"): a program's commissions, newest first (or the review queue), mark paid, approve and reject. Reads
// need program:read on the program; the writes need program:update on the commission's program.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList, Nullable, StringEnum } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { principalOf, programAccess } from '../auth/access.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, pathId, programOf, requireProgram } from '../../common.ts';
import { commissionsOfProgram, couponCodeOf, programOfCommission } from './dal.ts';
import type { CommissionRow } from './dal.ts';
import { COMMISSION_FILTERS, ERR } from './service.ts';
import { commissionView } from '../../../../shared/views/commission.ts';
import { approveCommission, markCommissionPaid, rejectCommission } from './operations.ts';
import { CommissionView } from '../../../../shared/views/commission.ts';

// A commission's answer is its view, as its events carry it (shared/views/commission.ts).
const CommissionOut = CommissionView;

// Property order is the order of the checks (see shared/http/validation.ts).
const CommissionQuery = Type.Object({
  status: Type.Optional(StringEnum(COMMISSION_FILTERS, ERR.status)),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, errorMessage: ERR.limit })),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 999_999_999, default: 0, errorMessage: ERR.offset }),
  ),
});
const CommissionParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'Commission id' }) });
const RejectBody = Type.Object({
  reason: Type.Optional(Nullable(Type.String({ maxLength: 500, errorMessage: ERR.reason }), ERR.reason)),
});

export function registerCommissionRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  /** The commission's id once the caller may update its program; 404 for one of another workspace. */
  async function writableCommission(req: FastifyRequest, commissionId: number): Promise<number> {
    const programId = Number.isSafeInteger(commissionId)
      ? await programOfCommission(sql, commissionId)
      : undefined;
    if (programId === undefined) throw new HttpError(404, ERR.notFound);
    try {
      await programAccess(sql, principalOf(req), programId, 'program:update');
    } catch (err) {
      // Do not reveal that a commission of another workspace exists.
      if (err instanceof HttpError && err.statusCode === 404) throw new HttpError(404, ERR.notFound);
      throw err;
    }
    return commissionId;
  }
  /** A transition's answer: the commission with its sale's code. */
  const answer = async (row: CommissionRow | undefined) => {
    if (!row) throw new HttpError(404, ERR.notFound);
    return { data: commissionView({ ...row, coupon_code: await couponCodeOf(sql, Number(row.id)) }) };
  };

  app.get(
    '/api/advertiser/affiliate-programs/:id/commissions',
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's commissions, newest first",
        description:
          'Scope program:read. `status` filters (pending, approved, paid, reversed, refunded), or `review`: ' +
          'the commissions held for review (review_reason set) that are neither approved nor rejected yet. ' +
          '`limit` 1..1000 (default 100) and `offset` (default 0) page through them. Errors: 400 `' +
          ERR.status +
          '`, `limit must be an integer from 1 to 1000`, `offset must be a non-negative integer`.',
        security: managementSecurity,
        params: ProgramParams,
        querystring: CommissionQuery,
        response: { 200: DataList(CommissionOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { status, limit = 100, offset = 0 } = req.query;
      const rows = await commissionsOfProgram(sql, programOf(req).programId, { status, limit, offset });
      return { data: rows.map(commissionView) };
    },
  );

  app.post(
    '/api/advertiser/commissions/:id/mark-paid',
    {
      schema: {
        tags: ['management'],
        summary: 'Mark one commission paid: status paid, and its amount deducted from the balances',
        description:
          "Scope program:update on the commission's program. Allowed from pending or approved, when the " +
          'commission is in no payout and not held for review (payouts pay their commissions together: ' +
          'POST /api/advertiser/payouts/:id/mark-paid). In one transaction: status `paid`, paid_at, the ledger ' +
          'entry `commission:<id>:paid` (kind commission_paid, -amount_cents, never clamped) applied to the ' +
          'partner and partner-program balances, and a `commission.updated` event. A later refund of a paid ' +
          'commission is deducted in full and may leave a balance negative (a clawback, recovered from the ' +
          "partner's next payouts). Errors: 404 `Commission not found`; 409 `Commission is already paid`, `A " +
          'reversed commission cannot be marked paid`, `A refunded commission cannot be marked paid`, ' +
          '`Commission is in pending payout <id>: mark the payout paid or cancel it`, `' +
          ERR.held +
          '`.',
        security: managementSecurity,
        params: CommissionParams,
        response: { 200: Data(CommissionOut), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req) => {
      const commissionId = await writableCommission(req, req.params.id);
      const row = await markCommissionPaid(deps, commissionId);
      return answer(row);
    },
  );

  app.post(
    '/api/advertiser/commissions/:id/approve',
    {
      schema: {
        tags: ['management'],
        summary: 'Approve a commission held for review (clears the hold)',
        description:
          "Scope program:update on the commission's program. Clears `review_reason`: a commission whose " +
          'payable_at has passed becomes `approved` at once, one still in its hold stays `pending` until the ' +
          'approval sweep reaches payable_at; a partly refunded one keeps status `refunded` and its remainder ' +
          'becomes payable. Records `commission.updated`. Errors: 404 `Commission not found`; 409 `' +
          ERR.notHeld +
          '`, `A reversed commission cannot be approved`.',
        security: managementSecurity,
        params: CommissionParams,
        response: { 200: Data(CommissionOut), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req) => {
      const commissionId = await writableCommission(req, req.params.id);
      const row = await approveCommission(deps, commissionId);
      return answer(row);
    },
  );

  app.post(
    '/api/advertiser/commissions/:id/reject',
    {
      // Before the body's 400: a caller who may not touch the commission learns nothing from it.
      preValidation: async (req) =>
        void (await writableCommission(req, pathId((req.params as { id?: unknown }).id))),
      schema: {
        tags: ['management'],
        summary: 'Reject a commission: it is reversed, as a full refund would reverse it',
        description:
          "Scope program:update on the commission's program. For an unpaid commission without deductions " +
          '(pending or approved, held for review or not) that is in no payout. In one transaction: status ' +
          '`reversed`, deducted_cents = amount_cents, refund_reason `rejected: <reason>` (`rejected` without ' +
          'a reason), the ledger entry `commission:<id>:refund` (kind commission_reversed, -amount_cents, ' +
          'clamped as an unpaid commission’s deduction), an in-app notification to the partner ' +
          '(`commission_rejected`) and `commission.updated`. A later refund of the sale is `skipped`. Errors: ' +
          '400 `' +
          ERR.reason +
          '`; 404 `Commission not found`; 409 `Commission is already reversed`, `A paid commission cannot be ' +
          'rejected`, `A refunded commission cannot be rejected`, `Commission is in pending payout <id>: mark ' +
          'the payout paid or cancel it`.',
        security: managementSecurity,
        params: CommissionParams,
        body: RejectBody,
        response: { 200: Data(CommissionOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const commissionId = req.params.id;
      const row = await rejectCommission(deps, commissionId, req.body?.reason);
      return answer(row);
    },
  );
}
