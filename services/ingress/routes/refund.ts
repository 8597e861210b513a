// POST /api/v1/track/refund (and its /api/tracking alias), spec 4.4: tracking token required. The
// reversal worker applies it and answers (reversed, refunded, skipped or no_commission).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { errorResponses } from '../../../shared/http/server.ts';
import type { IngressDeps } from '../deps.ts';
import { requireTrackingToken } from '../auth.ts';
import { registerTrackRoute } from '../track-route.ts';
import { requestIdFor, sendCommand, STILL_PROCESSING_SCHEMA } from '../commands/answer.ts';
import { RefundBody, RefundFirst, buildRefundCommand, refundFields } from '../commands/refund.ts';

const refundSchema = {
  tags: ['tracking'],
  summary: 'Record a refund: reverse (full) or reduce (partial) the commission',
  security: [{ trackingToken: [] }] as Record<string, string[]>[],
  body: RefundBody,
  response: {
    200: {
      type: 'object',
      properties: {
        success: { type: 'boolean' },
        status: { type: 'string', enum: ['reversed', 'refunded', 'skipped', 'no_commission'] },
        deductionAmount: { type: 'number' },
        commission_id: { type: 'integer' },
        reason: { type: 'string' },
        message: { type: 'string' },
      },
    },
    ...errorResponses(400, 401, 404, 409, 500),
    503: STILL_PROCESSING_SCHEMA,
  },
};

export function registerRefundRoute(app: FastifyInstance, deps: IngressDeps): void {
  const refund = async (req: FastifyRequest, reply: FastifyReply) => {
    const programId = req.trackingToken!.programId;
    const fields = refundFields(req.body as Static<typeof RefundFirst>);
    const requestId = requestIdFor(req.headers['idempotency-key'], 'refund', programId);
    const cmd = buildRefundCommand(fields, req.body, { requestId, ts: Date.now(), programId });
    return sendCommand(deps, req, reply, deps.topics.refunds, cmd.transaction_id, cmd);
  };
  registerTrackRoute(app, 'refund', {
    schema: refundSchema,
    checkedFirst: RefundFirst,
    // The token is checked before the body, as it always was (a 401 comes before any 400).
    beforeBody: async (req: FastifyRequest) => {
      await requireTrackingToken(req, deps.cache);
    },
    handler: refund,
  });
}
