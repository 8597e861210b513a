// POST /api/v1/track/sale (and its /api/tracking alias), spec 4.3: server only, tracking token required
// (test mode excepted). The attribution worker applies it and answers, 409 for a recorded transaction_id.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, jsonBody, errorResponses } from '../../../shared/http/server.ts';
import { MAX_AMOUNT_CENTS } from '../../../shared/domain/money.ts';
import type { IngressDeps } from '../deps.ts';
import { readTrackingToken, requireTrackingToken } from '../auth.ts';
import { parseCommandAdditionalData } from '../input.ts';
import { registerTrackRoute } from '../track-route.ts';
import { requestIdFor, sendCommand, STILL_PROCESSING_SCHEMA } from '../commands/answer.ts';
import {
  buildSaleCommand,
  parseSaleBody,
  saleKey,
  testSaleProgram,
  testTransactionId,
} from '../commands/sale.ts';

const saleSchema = {
  tags: ['tracking'],
  summary: 'Record a sale',
  description:
    'Server only, tracking token required. 409 `Duplicate transaction_id. This sale has already been recorded.` ' +
    '(also `message`, `statusCode`): already recorded, do not retry. transaction_id is unique across all programs. ' +
    '409 `Idempotency-Key was used with a different request`: the key was used with other parameters.',
  security: [{ trackingToken: [] }] as Record<string, string[]>[],
  body: {
    type: 'object',
    required: ['transaction_id', 'amount_cents'],
    properties: {
      transaction_id: { type: 'string' },
      amount_cents: { type: 'integer', minimum: 1, maximum: MAX_AMOUNT_CENTS },
      customer_key: { type: 'string' },
      click_id: { type: 'string' },
      currency: {
        type: 'string',
        description:
          "ISO 4217; must be the program's currency (400 otherwise); omitted: the program's currency (USD by default)",
      },
      sale_type: { type: 'string', enum: ['payment', 'subscription'] },
      line_items: { type: 'object', additionalProperties: true },
      is_recurring: { type: 'boolean' },
      subscription_id: { type: 'string' },
      subscription_interval: { type: 'string', enum: ['monthly', 'quarterly', 'annual'] },
      product_id: { type: 'string' },
      additional_data: { type: 'object', properties: { test_mode: { type: 'boolean' } } },
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        success: { type: 'boolean' },
        sale_id: { type: 'integer' },
        commission_id: { type: ['integer', 'null'] },
        message: { type: 'string' },
        data: { type: 'object', additionalProperties: true },
      },
    },
    ...errorResponses(400, 401),
    409: {
      type: 'object',
      properties: {
        error: { type: 'string' },
        message: { type: 'string' },
        statusCode: { type: 'integer' },
      },
    },
    500: ERROR_SCHEMA,
    503: STILL_PROCESSING_SCHEMA,
  },
};

export function registerSaleRoute(app: FastifyInstance, deps: IngressDeps): void {
  const { cache } = deps;
  const sale = async (req: FastifyRequest, reply: FastifyReply) => {
    const body = jsonBody(req);
    const ad = parseCommandAdditionalData(body);
    let programId: number;
    if (ad.testMode) {
      const token = await readTrackingToken(req, cache);
      programId = testSaleProgram(token.kind === 'valid' ? token.programId : null, ad.programId);
    } else {
      programId = await requireTrackingToken(req, cache);
    }
    const fields = parseSaleBody(body, ad.testMode, () => testTransactionId(Date.now(), deps.snowflake.node));
    const requestId = requestIdFor(req.headers['idempotency-key'], 'sale', programId);
    const cmd = buildSaleCommand(fields, body, { requestId, ts: Date.now(), programId });
    return sendCommand(deps, req, reply, deps.topics.sales, saleKey(cmd), cmd);
  };
  registerTrackRoute(app, 'sale', saleSchema, sale);
}
