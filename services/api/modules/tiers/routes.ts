// A program's tier ladder (CONTRACT part four "Tiers"; docs/rewards.md): GET and PUT (the whole list)
// …/tier-rules, program:read / program:update. The moves the rules make happen in the transaction of the
// sale or refund that crosses a threshold (the attribution and reversal workers; shared/rewards).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, errorResponses, requiresBody } from '../../../../shared/http/server.ts';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Static } from '@sinclair/typebox';
import { Checked, DataList, StringEnum, formatError } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { TIER_METRICS, TIER_WINDOWS } from '../../../../shared/domain/tiers.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import * as dal from './dal.ts';
import { replaceLadder } from './operations.ts';
import { ERR, MAX_TIER_RULES, toTierRule } from './service.ts';

// Property order is the order of the checks (shared/http/validation.ts); a rule's messages are prefixed
// with where it is (tier_rules[i].) by the body's check below.
const RuleIn = Type.Object(
  {
    from_group_id: Type.Integer({ minimum: 1, errorMessage: ERR.fromGroup }),
    to_group_id: Type.Integer({ minimum: 1, errorMessage: ERR.toGroup }),
    metric: StringEnum(TIER_METRICS, ERR.metric, {
      description:
        "sales_cents: the partner's attributed sales less refunds; customers: distinct customers with a sale; " +
        'commission_cents: its commissions less what refunds took back',
    }),
    window: StringEnum(TIER_WINDOWS, ERR.window, { description: 'lifetime, or the UTC calendar month' }),
    threshold: Type.Integer({ minimum: 1, maximum: 1e15, errorMessage: ERR.threshold }),
    carry_existing_customers: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          "true: every later sale of the partner's customers earns the new group's rate; false: a customer " +
          'whose first commission with the partner came before the move keeps the rate of the group it left',
        errorMessage: ERR.carry,
      }),
    ),
  },
  { errorMessage: ERR.rule },
);
const compiledRule = TypeCompiler.Compile(RuleIn);
/** The body's shape: an array of rules, each rule's first fault named with its place (`tier_rules[2].…`). */
function ladderShapeError(v: unknown): string | null {
  if (!Array.isArray(v) || v.length > MAX_TIER_RULES) return ERR.body;
  for (const [i, r] of v.entries()) {
    if (compiledRule.Check(r)) continue;
    const m = formatError(RuleIn, compiledRule.Errors(r)) ?? ERR.rule;
    return m === ERR.rule ? `tier_rules[${i}] ${ERR.rule}` : `tier_rules[${i}].${m}`;
  }
  return null;
}
const Ladder = Checked<Static<typeof RuleIn>[]>(
  { type: 'array', maxItems: MAX_TIER_RULES, items: RuleIn },
  ladderShapeError,
);

const RuleOut = Type.Object({
  id: Type.Integer(),
  from_group_id: Type.Integer(),
  to_group_id: Type.Integer(),
  metric: Type.String({ enum: [...TIER_METRICS] }),
  window: Type.String({ enum: [...TIER_WINDOWS] }),
  threshold: Type.Integer(),
  carry_existing_customers: Type.Boolean(),
});

/** preValidation: the body must be there and be an array (the validator reads a missing body as {}). */
const requireArray = requiresBody(async (req: FastifyRequest) => {
  if (!Array.isArray(req.body)) throw new HttpError(400, ERR.body);
});

export function registerTierRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const path = '/api/advertiser/affiliate-programs/:id/tier-rules';

  app.get(
    path,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: "The program's tier ladder",
        description: 'Scope program:read. The rules in the order they are tried.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 200: DataList(RuleOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: (await dal.rulesOf(sql, programOf(req).programId)).map(toTierRule) }),
  );

  app.put(
    path,
    {
      preValidation: [requireProgram(sql, 'program:update'), requireArray],
      schema: {
        tags: ['management'],
        summary: "Replace the program's tier ladder",
        description:
          'Scope program:update. The body is the whole list (a JSON array, at most ' +
          MAX_TIER_RULES +
          ' rules, tried in this order; `[]` removes them all); rule ids are new after each PUT. After each sale ' +
          'or refund, a partner of `from_group_id` who is not locked and whose `metric` in the `window` reached ' +
          '`threshold` moves to `to_group_id` in that same transaction, once (docs/rewards.md): the crossing sale ' +
          'is priced by the group it was in, later ones by the new. Errors: 400 `' +
          ERR.body +
          '`, `tier_rules[i].from_group_id must be the id of a group of this program` (unknown, deleted or ' +
          'another program’s; likewise to_group_id), `tier_rules[i].to_group_id must differ from ' +
          'from_group_id`, `tier_rules[i].metric must be one of …`, `tier_rules[i].window must be one of …`, ' +
          '`tier_rules[i].threshold must be a positive integer`, `tier_rules form a cycle (groups a → b → a): a ' +
          'partner could move back and forth`. Nothing changes on a 400.',
        security: managementSecurity,
        params: ProgramParams,
        body: Ladder,
        response: { 200: DataList(RuleOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const done = await replaceLadder(sql, programOf(req).programId, req.body);
      if ('error' in done) throw new HttpError(400, done.error);
      return { data: done.map(toTierRule) };
    },
  );
}
