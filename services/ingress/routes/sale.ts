// POST /api/v1/track/sale (and its /api/tracking alias), spec 4.3: server only, tracking token required
// (test mode excepted). The attribution worker applies it and answers, 409 for a recorded transaction_id.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { ERROR_SCHEMA, errorResponses } from '../../../shared/http/server.ts';
import type { IngressDeps } from '../deps.ts';
import { readTrackingToken, requireTrackingToken } from '../auth.ts';
import { commandAdditionalData } from '../input.ts';
import { registerTrackRoute } from '../track-route.ts';
import { requestIdFor, sendCommand, STILL_PROCESSING_SCHEMA } from '../commands/answer.ts';
import {
  SaleBody,
  SaleFirst,
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
  // `{}`: a test sale (additional_data.test_mode) needs no token when it names its program.
  security: [{ trackingToken: [] }, {}] as Record<string, string[]>[],
  body: SaleBody,
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
    const body = req.body as Static<typeof SaleFirst>;
    const ad = commandAdditionalData(body.additional_data);
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
  registerTrackRoute(app, 'sale', { schema: saleSchema, checkedFirst: SaleFirst, handler: sale });
}
