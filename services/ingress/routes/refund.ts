// POST /api/v1/track/refund (and its /api/tracking alias), spec 4.4: tracking token required. The
// reversal worker applies it and answers (reversed, refunded, skipped or no_commission).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jsonBody, errorResponses } from '../../../shared/http/server.ts';
import type { IngressDeps } from '../deps.ts';
import { requireTrackingToken } from '../auth.ts';
import { registerTrackRoute } from '../track-route.ts';
import { requestIdFor, sendCommand, STILL_PROCESSING_SCHEMA } from '../commands/answer.ts';
import { buildRefundCommand, parseRefundBody } from '../commands/refund.ts';

const refundSchema = {
  tags: ['tracking'],
  summary: 'Record a refund: reverse (full) or reduce (partial) the commission',
  security: [{ trackingToken: [] }] as Record<string, string[]>[],
  body: {
    type: 'object',
    required: ['transaction_id'],
    properties: {
      transaction_id: { type: 'string' },
      refund_amount_cents: { type: 'integer', minimum: 0, description: 'Omitted or 0: full refund.' },
      refund_reason: { type: 'string' },
    },
  },
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
    const programId = await requireTrackingToken(req, deps.cache);
    const body = jsonBody(req);
    const fields = parseRefundBody(body);
    const requestId = requestIdFor(req.headers['idempotency-key'], 'refund', programId);
    const cmd = buildRefundCommand(fields, body, { requestId, ts: Date.now(), programId });
    return sendCommand(deps, req, reply, deps.topics.refunds, cmd.transaction_id, cmd);
  };
  registerTrackRoute(app, 'refund', refundSchema, refund);
}
