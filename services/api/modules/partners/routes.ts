// Partners of a program (CONTRACT "Partners, links, commissions, balances"): add one, list them with
// their balances. Reads need program:read on the program; writes need program:update.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList, Email, Nullable, StringEnum, Trimmed } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import { addPartner, partnersOfProgram } from './dal.ts';
import { ERR, PARTNER_STATUSES, partnerInput, toPartnerCreated, toPartnerListed } from './service.ts';

// Property order is the order of the checks (see shared/http/validation.ts).
const PartnerInput = Type.Object({
  name: Trimmed(200, { errorMessage: ERR.name }),
  email: Email(320, { errorMessage: ERR.email }),
  status: Type.Optional(
    Nullable(StringEnum(PARTNER_STATUSES, ERR.status, { default: 'approved' }), ERR.status),
  ),
});

const Status = Type.String({ enum: [...PARTNER_STATUSES] });

export function registerPartnerRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id';

  app.post(
    `${base}/partners`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Add a partner to the program',
        description:
          'Scope program:update. A partner of the same workspace with this email (case-insensitive) is reused; ' +
          'its name is kept. Errors: 400 `name is required and must be 1 to 200 characters`, `email must be a ' +
          "valid email address`, `status must be 'approved' or 'pending'`; 404 `Program not found`; 409 " +
          '`Partner is already in this program`, `Partner earns in <currency> in its other programs; a ' +
          "partner's programs share one currency (its balance is one amount)`.",
        security: managementSecurity,
        params: ProgramParams,
        body: PartnerInput,
        response: {
          201: Data(
            Type.Object({
              partner: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }),
              partner_program: Type.Object({
                id: Type.Integer(),
                status: Status,
                created_at: Type.String({ format: 'date-time' }),
              }),
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const access = programOf(req);
      const result = await addPartner(sql, access.workspaceId, access.programId, partnerInput(req.body));
      if (!result) throw new HttpError(409, ERR.alreadyIn);
      if ('currencyConflict' in result) throw new HttpError(409, ERR.otherCurrency(result.currencyConflict));
      return reply.code(201).send({ data: toPartnerCreated(result.partner, result.pp) });
    },
  );

  app.get(
    `${base}/partners`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's partners with their balances",
        description:
          'Scope program:read. `id` is the partner id; `balance_cents` is the partner balance over all ' +
          "programs, `program_balance_cents` the partner-program balance; `joined_at` is the partner-program's " +
          'creation time. Each balance is the sum of its ledger entries (it may be negative after a refund of a ' +
          'paid commission).',
        security: managementSecurity,
        params: ProgramParams,
        response: {
          200: DataList(
            Type.Object({
              id: Type.Integer(),
              name: Type.String(),
              email: Type.String(),
              partner_program_id: Type.Integer(),
              status: Status,
              clicks: Type.Integer(),
              balance_cents: Type.Integer(),
              program_balance_cents: Type.Integer(),
              joined_at: Type.String({ format: 'date-time' }),
            }),
          ),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => ({ data: (await partnersOfProgram(sql, programOf(req).programId)).map(toPartnerListed) }),
  );
}
