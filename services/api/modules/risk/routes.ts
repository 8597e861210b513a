// Risk (CONTRACT part three "Traffic quality and fraud"): GET /api/advertiser/affiliate-programs/:id/risk,
// scope program:read. The held commissions by reason and partner (approve and reject through the
// commissions routes, as for any hold) and the clicks left out of every counter, by quality.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../../../shared/http/server.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { REVIEW_REASONS } from '../../../../shared/commissions/review-reasons.ts';
import { FILTERED_QUALITIES } from '../../../../shared/tracking/quality.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import { filteredByDay, filteredByQuality, heldByReasonAndPartner } from './dal.ts';
import { RISK_DAYS, riskBody, riskSince } from './service.ts';

const Quality = Type.String({ enum: [...FILTERED_QUALITIES] });
const RiskOut = Type.Object({
  data: Type.Object({
    held: Type.Array(
      Type.Object({
        reason: Type.String({ enum: [...REVIEW_REASONS] }),
        partner_id: Type.Integer(),
        partner_name: Type.String(),
        commissions: Type.Integer({
          description: 'Held and undecided commissions of the partner for the reason',
        }),
        amount_cents: Type.Integer({
          description: 'What they would pay: their amounts less refunds, in cents',
        }),
      }),
    ),
    filtered_clicks: Type.Array(Type.Object({ quality: Quality, clicks: Type.Integer() }), {
      description: 'Bot and prefetch clicks of the program, all time: stored, counted nowhere',
    }),
    filtered_by_day: Type.Array(
      Type.Object({ date: Type.String({ format: 'date' }), quality: Quality, clicks: Type.Integer() }),
      {
        description: `Beyond the contract: the same by UTC day, the last ${RISK_DAYS} days (days without any left out)`,
      },
    ),
  }),
});

export function registerRiskRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  app.get(
    '/api/advertiser/affiliate-programs/:id/risk',
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: 'Held commissions by reason and partner, and the bot and prefetch clicks by quality',
        description:
          'Scope program:read. `held`: the commissions held for review and not yet approved or rejected ' +
          '(`?status=review` of the commissions list), grouped by reason and partner, largest amount first ' +
          'within a reason. `filtered_clicks`: the clicks stored as `bot` or `prefetch` (answered as any ' +
          'click, left out of every counter), both qualities always listed.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 200: RiskOut, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const { programId } = programOf(req);
      const [held, byQuality, byDay] = await Promise.all([
        heldByReasonAndPartner(sql, programId),
        filteredByQuality(sql, programId),
        filteredByDay(sql, programId, riskSince(Date.now())),
      ]);
      return riskBody(held, byQuality, byDay);
    },
  );
}
