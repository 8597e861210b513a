// Bonuses (CONTRACT part four "Bonuses"; docs/rewards.md): GET and POST …/bonuses, DELETE …/bonuses/:bonusId
// (program:read / program:update). A partner whose figure since the bonus starts (or in a month) reaches the
// threshold before it ends gets one commission of its amount, without a sale, held, approved and paid like
// any other (the attribution worker, in the transaction of the sale that reached it; or at creation, for
// partners already past it).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import {
  Checked,
  Data,
  DataList,
  Nullable,
  StringEnum,
  Trimmed,
} from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { BONUS_METRICS, BONUS_PERIODS } from '../../../../shared/domain/bonuses.ts';
import { MAX_AMOUNT_CENTS } from '../../../../shared/domain/money.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import * as dal from './dal.ts';
import { createBonus } from './operations.ts';
import { ERR, bonusInput, isoTime, toBonus } from './service.ts';

const BonusParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  bonusId: Type.Integer({ minimum: 1, description: 'Bonus id' }),
});

// Property order is the order of the checks (shared/http/validation.ts).
const CreateBody = Type.Object({
  name: Trimmed(100, { errorMessage: ERR.name }),
  group_ids: Type.Optional(
    Nullable(
      Type.Array(Type.Integer({ minimum: 1 }), {
        maxItems: 100,
        description: 'null or omitted: every group',
      }),
      ERR.groupIds,
    ),
  ),
  metric: StringEnum(BONUS_METRICS, ERR.metric, {
    description:
      'sales_cents: attributed sales less refunds; customers: distinct customers with a sale; conversions: ' +
      'customers whose first purchase it was',
  }),
  threshold: Type.Integer({ minimum: 1, maximum: 1e15, errorMessage: ERR.threshold }),
  amount_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, errorMessage: ERR.amount }),
  period: StringEnum(BONUS_PERIODS, ERR.period, {
    description: 'once: one commission in the bonus’s window; calendar_month: one per UTC month in it',
  }),
  starts_at: Type.Optional(
    Checked<string | null>(
      { type: ['string', 'null'], format: 'date-time', description: 'Default: now' },
      (v) => (v === null || isoTime(v) ? null : ERR.startsAt),
    ),
  ),
  ends_at: Checked<string>({ type: 'string', format: 'date-time' }, (v) => (isoTime(v) ? null : ERR.endsAt)),
});

const BonusOut = Type.Object({
  id: Type.Integer(),
  program_id: Type.Integer(),
  name: Type.String(),
  group_ids: Type.Union([Type.Array(Type.Integer()), Type.Null()], { description: 'null: every group' }),
  metric: Type.String({ enum: [...BONUS_METRICS] }),
  threshold: Type.Integer(),
  amount_cents: Type.Integer(),
  period: Type.String({ enum: [...BONUS_PERIODS] }),
  starts_at: Type.String({ format: 'date-time' }),
  ends_at: Type.String({ format: 'date-time' }),
  awarded: Type.Integer({ description: 'How many commissions it has made' }),
  created_at: Type.String({ format: 'date-time' }),
});

export function registerBonusRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs/:id/bonuses';

  app.get(
    base,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's bonuses",
        description:
          'Scope program:read. Deleted ones are left out; `awarded` counts the commissions each made.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 200: DataList(BonusOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: (await dal.bonusesOf(sql, programOf(req).programId)).map(toBonus) }),
  );

  app.post(
    base,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Create a bonus',
        description:
          'Scope program:update. A partner of one of `group_ids` (null: any group) whose `metric` since ' +
          '`starts_at` (`period` once) or in a UTC month (`calendar_month`) reaches `threshold` before `ends_at` ' +
          'gets one commission of `amount_cents`: `sale_id` null, `bonus_id`, `rule.source` bonus, held, ' +
          'reviewed, approved and paid like any other; at most one per bonus, partner and period. Sales since ' +
          '`starts_at` count (a partner already past the threshold gets its commission now). Errors: 400 `' +
          [
            ERR.name,
            ERR.groupIds,
            'group_ids[i] must be the id of a group of this program',
            ERR.metric,
            ERR.threshold,
            ERR.amount,
            ERR.period,
            ERR.startsAt,
            ERR.endsAt,
            ERR.window,
            ERR.past,
          ].join('`, `') +
          '`.',
        security: managementSecurity,
        params: ProgramParams,
        body: CreateBody,
        response: { 201: Data(BonusOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { programId } = programOf(req);
      const input = bonusInput(req.body);
      if (typeof input === 'string') throw new HttpError(400, input);
      const id = await createBonus(sql, { kafkaPrefix: deps.kafkaPrefix }, programId, input);
      if (typeof id !== 'number') throw new HttpError(400, id.error);
      return reply.code(201).send({ data: toBonus((await dal.bonusOf(sql, programId, id))!) });
    },
  );

  app.delete(
    `${base}/:bonusId`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Delete a bonus (it stops counting; the commissions it made stay)',
        description: `Scope program:update. 204; 404 \`${ERR.notFound}\`.`,
        security: managementSecurity,
        params: BonusParams,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (req, reply) => {
      if (!(await dal.deleteBonus(sql, programOf(req).programId, req.params.bonusId)))
        throw new HttpError(404, ERR.notFound);
      return reply.code(204).send();
    },
  );
}
