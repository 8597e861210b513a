// Commissions (CONTRACT "Partners, links, commissions, balances"): a program's commissions, newest first,
// and mark paid. Reads need program:read on the program; mark paid needs program:update on the
// commission's program.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList, StringEnum } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { principalOf, programAccess } from '../auth/access.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import { commissionsOfProgram, markPaid, programOfCommission } from './dal.ts';
import { COMMISSION_STATUSES, ERR, checkPayable, paidEntry, toCommission } from './service.ts';

const CommissionOut = Type.Object({
  id: Type.Integer(),
  status: Type.String({ enum: [...COMMISSION_STATUSES] }),
  amount_cents: Type.Integer(),
  currency: Type.String(),
  sale_id: Type.Integer(),
  partner_id: Type.Integer(),
  refund_reason: Type.Union([Type.String(), Type.Null()]),
  paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

// Property order is the order of the checks (see shared/http/validation.ts).
const CommissionQuery = Type.Object({
  status: Type.Optional(StringEnum(COMMISSION_STATUSES, ERR.status)),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, errorMessage: ERR.limit })),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 999_999_999, default: 0, errorMessage: ERR.offset }),
  ),
});

export function registerCommissionRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  app.get(
    '/api/advertiser/affiliate-programs/:id/commissions',
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's commissions, newest first",
        description:
          'Scope program:read. `status` filters (pending, approved, paid, reversed, refunded); `limit` ' +
          '1..1000 (default 100) and `offset` (default 0) page through them. Errors: 400 `status must be one ' +
          'of pending, approved, paid, reversed, refunded`, `limit must be an integer from 1 to 1000`, ' +
          '`offset must be a non-negative integer`.',
        security: managementSecurity,
        params: ProgramParams,
        querystring: CommissionQuery,
        response: { 200: DataList(CommissionOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { status, limit = 100, offset = 0 } = req.query;
      const rows = await commissionsOfProgram(sql, programOf(req).programId, { status, limit, offset });
      return { data: rows.map(toCommission) };
    },
  );

  app.post(
    '/api/advertiser/commissions/:id/mark-paid',
    {
      schema: {
        tags: ['management'],
        summary: 'Mark a commission paid: status paid, and its amount deducted from the balances',
        description:
          "Scope program:update on the commission's program. Allowed from pending or approved. In one " +
          'transaction: status `paid`, paid_at, and the ledger entry `commission:<id>:paid` (kind ' +
          'commission_paid, -amount_cents, never clamped) applied to the partner and partner-program ' +
          'balances. A later refund of a paid commission is deducted in full and may leave a balance ' +
          'negative. Errors: 404 `Commission not found`; 409 `Commission is already paid`, `A reversed ' +
          'commission cannot be marked paid`, `A refunded commission cannot be marked paid`.',
        security: managementSecurity,
        params: Type.Object({ id: Type.Integer({ minimum: 1, description: 'Commission id' }) }),
        response: { 200: Data(CommissionOut), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req) => {
      const commissionId = req.params.id;
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
      const row = await markPaid(sql, commissionId, {
        check: checkPayable,
        entry: (c) => paidEntry(commissionId, c),
      });
      if (!row) throw new HttpError(404, ERR.notFound);
      return { data: toCommission(row) };
    },
  );
}
