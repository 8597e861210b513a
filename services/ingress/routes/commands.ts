// POST /api/v1/track/lead, /sale, /refund (and their /api/tracking aliases), GET /api/v1/cli/status.
// The ingress authenticates and validates (spec section 7 strings), produces the command with a
// request_id, and answers with the outcome the owning worker recorded (shared/outcomes.ts). Past
// COMMAND_DEADLINE_MS it answers 503 with Retry-After: the command is still queued, and a retry resolves
// to the recorded outcome (same Idempotency-Key) or, for a sale, to 409.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import {
  HttpError,
  ERROR_SCHEMA,
  noValidation,
  jsonBody,
  errorResponses,
} from '../../../shared/http/server.ts';
import { isPlainObject } from '../../../shared/json.ts';
import { parseClickId } from '../../../shared/domain/ids.ts';
import { MAX_AMOUNT_CENTS } from '../../../shared/domain/money.ts';
import type { LeadCommand, RefundCommand, SaleCommand } from '../../../shared/contracts/commands.ts';
import { findOutcome } from '../../../shared/pipeline/outcomes.ts';
import { FAILURE_STRINGS } from '../../../shared/pipeline/command-handler.ts';
import type { IngressDeps } from '../deps.ts';
import { readTrackingToken, requireTrackingToken } from '../auth.ts';
import { checkOrigin } from '../cors.ts';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const MAX_ID = 255;

function optString(body: Record<string, unknown>, field: string, max = MAX_ID): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new HttpError(400, `${field} must be a string`);
  const s = v.trim(); // NULs are already gone (installJsonHandling)
  if (s.length > max) throw new HttpError(400, `${field} must be at most ${max} characters`);
  return s === '' ? null : s;
}

function additionalData(body: Record<string, unknown>) {
  const ad = body.additional_data;
  if (ad === undefined || ad === null) return { testMode: false, programId: null, eventName: null };
  if (!isPlainObject(ad)) throw new HttpError(400, 'additional_data must be an object');
  if (ad.test_mode !== undefined && typeof ad.test_mode !== 'boolean') {
    throw new HttpError(400, 'additional_data.test_mode must be a boolean');
  }
  const pid = ad.program_id;
  if (pid !== undefined && pid !== null && !(Number.isSafeInteger(pid) && (pid as number) > 0)) {
    throw new HttpError(400, 'additional_data.program_id must be a positive integer');
  }
  return {
    testMode: ad.test_mode === true,
    programId: (pid as number | undefined) ?? null,
    eventName: optString(ad, 'event_name'),
  };
}

let lastTestTxnMs = 0;
let testTxnSeq = 0;
/** `test_txn_<timestamp>` (spec 4.3), with a suffix when two are minted in one millisecond. */
function testTransactionId(): string {
  const now = Date.now();
  if (now === lastTestTxnMs) return `test_txn_${now}_${++testTxnSeq}`;
  lastTestTxnMs = now;
  testTxnSeq = 0;
  return `test_txn_${now}`;
}

export function registerCommandRoutes(app: FastifyInstance, deps: IngressDeps): void {
  const { cache, producer, waiter, topics, commandDeadlineMs } = deps;

  /** Idempotency-Key (optional): a retry with the same key gets the recorded answer itself. */
  function requestIdFor(req: FastifyRequest, kind: string, scope: number | null): string {
    const key = req.headers['idempotency-key'];
    if (key === undefined) return randomUUID();
    if (typeof key !== 'string' || key.length === 0 || key.length > 200) {
      throw new HttpError(400, 'Idempotency-Key must be 1 to 200 characters');
    }
    return `${kind}:${scope ?? 'anon'}:${key}`;
  }

  async function dispatch(
    req: FastifyRequest,
    reply: FastifyReply,
    kind: 'lead' | 'sale' | 'refund',
    topic: string,
    key: string,
    cmd: LeadCommand | SaleCommand | RefundCommand,
  ) {
    if (req.headers['idempotency-key'] !== undefined) {
      const done = await findOutcome(deps.sql, cmd.request_id);
      if (done) return reply.code(done.statusCode).send(done.body);
    }
    const pending = waiter.wait(cmd.request_id, commandDeadlineMs);
    try {
      await producer.send(topic, { key, value: JSON.stringify(cmd) });
    } catch (err) {
      pending.cancel();
      req.log.error({ err }, `${kind} not acknowledged by Kafka`);
      throw new HttpError(500, FAILURE_STRINGS[kind]);
    }
    const outcome = await pending.promise;
    if (!outcome) {
      return reply
        .code(503)
        .header('retry-after', '2')
        .send({
          error: `The ${kind} was accepted and is still being processed; retry the same request to get its result`,
        });
    }
    return reply.code(outcome.statusCode).send(outcome.body);
  }

  // ---- lead (spec 4.2) ----
  const lead = async (req: FastifyRequest, reply: FastifyReply) => {
    deps.rateLimiter.check(req, reply);
    const b = jsonBody(req);
    const ad = additionalData(b);
    const clickId = optString(b, 'click_id');
    const customerKey = optString(b, 'customer_key');
    const email = optString(b, 'email', 320);
    const token = await readTrackingToken(req, cache);
    // Test mode needs no real token; otherwise an Authorization header must carry a valid one.
    if (token.kind === 'invalid' && !ad.testMode) throw new HttpError(401, token.reason);
    const tokenProgram = token.kind === 'valid' ? token.programId : null;
    if (!ad.testMode && clickId === null && customerKey === null) {
      throw new HttpError(400, 'click_id or customer_key is required');
    }
    if (!ad.testMode && clickId === null && tokenProgram === null && ad.programId === null) {
      // Browser mode, no click, no program: nothing can identify or create the customer (CONTRACT).
      throw new HttpError(400, 'Customer not found. Provide a valid click_id or customer_key.');
    }
    if (clickId !== null && !parseClickId(clickId) && !ad.testMode) {
      throw new HttpError(400, 'Customer not found. Provide a valid click_id or customer_key.');
    }
    if (tokenProgram === null && ad.programId !== null) {
      // Browser or test mode names its program itself: it must be one that takes leads.
      const named = await cache.getProgram(ad.programId);
      if (!named || named.deleted)
        throw new HttpError(400, 'additional_data.program_id does not name a program');
    }
    let programId = tokenProgram ?? ad.programId;
    if (programId === null && clickId !== null) {
      const pp = parseClickId(clickId);
      programId = pp ? await cache.programIdForPartnerProgram(Number(pp.partnerProgramId)) : null;
    }
    if (ad.testMode && programId === null) {
      throw new HttpError(
        400,
        'additional_data.program_id is required for a test lead without a tracking token',
      );
    }
    if (req.headers.origin !== undefined && programId !== null) {
      const program = await cache.getProgram(programId);
      if (program) checkOrigin(req, reply, program);
    }
    const cmd: LeadCommand = {
      v: 1,
      type: 'lead',
      request_id: requestIdFor(req, 'lead', programId),
      ts: Date.now(),
      token_program_id: tokenProgram,
      program_id_hint: ad.programId ?? (ad.testMode ? programId : null),
      click_id: clickId,
      customer_key: customerKey,
      email,
      event_name: ad.eventName,
      session_id: optString(b, 'session_id', 128),
      page_url: optString(b, 'page_url', 2048),
      is_test: ad.testMode,
    };
    // Keyed by click_id on the clicks topic: the lead is ordered behind its click.
    const key = clickId ?? `key:${programId}:${customerKey ?? cmd.request_id}`;
    return dispatch(req, reply, 'lead', topics.clicks, key, cmd);
  };

  // ---- sale (spec 4.3) ----
  const sale = async (req: FastifyRequest, reply: FastifyReply) => {
    const b = jsonBody(req);
    const ad = additionalData(b);
    let programId: number;
    if (ad.testMode) {
      const token = await readTrackingToken(req, cache);
      const pid = token.kind === 'valid' ? token.programId : ad.programId;
      if (pid === null) {
        throw new HttpError(
          400,
          'additional_data.program_id is required for a test sale without a tracking token',
        );
      }
      programId = pid;
    } else {
      programId = await requireTrackingToken(req, cache);
    }
    let transactionId = b.transaction_id;
    if ((transactionId === undefined || transactionId === null) && ad.testMode)
      transactionId = testTransactionId();
    if (typeof transactionId !== 'string' || transactionId.trim() === '' || transactionId.length > MAX_ID) {
      throw new HttpError(400, 'transaction_id is required and must be a string');
    }
    let amount = b.amount_cents;
    if ((amount === undefined || amount === null) && ad.testMode) amount = 0;
    if (!(Number.isSafeInteger(amount) && ((amount as number) > 0 || (ad.testMode && amount === 0)))) {
      throw new HttpError(400, 'amount_cents is required and must be a positive integer');
    }
    if ((amount as number) > MAX_AMOUNT_CENTS) {
      throw new HttpError(400, `amount_cents must be at most ${MAX_AMOUNT_CENTS}`);
    }
    const currencyRaw = b.currency ?? 'USD';
    if (typeof currencyRaw !== 'string' || !CURRENCIES.has(currencyRaw.toUpperCase())) {
      throw new HttpError(400, 'currency must be an ISO 4217 code');
    }
    const saleType = b.sale_type ?? 'payment';
    if (saleType !== 'payment' && saleType !== 'subscription') {
      throw new HttpError(400, "sale_type must be 'payment' or 'subscription'");
    }
    const interval = b.subscription_interval ?? null;
    if (interval !== null && interval !== 'monthly' && interval !== 'quarterly' && interval !== 'annual') {
      throw new HttpError(400, "subscription_interval must be 'monthly', 'quarterly' or 'annual'");
    }
    const isRecurring = b.is_recurring ?? false;
    if (typeof isRecurring !== 'boolean') throw new HttpError(400, 'is_recurring must be a boolean');
    const lineItems = b.line_items ?? null;
    if (lineItems !== null && typeof lineItems !== 'object')
      throw new HttpError(400, 'line_items must be an object');
    const customerKey = optString(b, 'customer_key');
    const clickId = optString(b, 'click_id');
    if (!ad.testMode && customerKey === null && clickId === null) {
      throw new HttpError(400, 'Customer not found. Provide customer_key or click_id.');
    }
    const cmd: SaleCommand = {
      v: 1,
      type: 'sale',
      request_id: requestIdFor(req, 'sale', programId),
      ts: Date.now(),
      program_id: programId,
      transaction_id: transactionId.trim(),
      amount_cents: amount as number,
      currency: currencyRaw.toUpperCase(),
      customer_key: customerKey,
      click_id: clickId,
      sale_type: saleType,
      line_items: lineItems,
      is_recurring: isRecurring,
      subscription_id: optString(b, 'subscription_id'),
      subscription_interval: interval,
      product_id: optString(b, 'product_id'),
      is_test: ad.testMode,
    };
    // Keyed by customer: one customer's sales stay in one partition, so chunks on different partitions
    // rarely wait for each other's customer rows (correctness does not depend on it).
    return dispatch(
      req,
      reply,
      'sale',
      topics.sales,
      cmd.customer_key ?? cmd.click_id ?? cmd.transaction_id,
      cmd,
    );
  };

  // ---- refund (spec 4.4) ----
  const refund = async (req: FastifyRequest, reply: FastifyReply) => {
    const programId = await requireTrackingToken(req, cache);
    const b = jsonBody(req);
    const transactionId = b.transaction_id;
    if (typeof transactionId !== 'string' || transactionId.trim() === '' || transactionId.length > MAX_ID) {
      throw new HttpError(400, 'transaction_id is required');
    }
    const raw = b.refund_amount_cents;
    let refundAmount: number | null = null;
    if (raw !== undefined && raw !== null && raw !== 0) {
      if (!(Number.isSafeInteger(raw) && (raw as number) > 0)) {
        throw new HttpError(400, 'refund_amount_cents must be a positive integer');
      }
      refundAmount = raw as number;
    }
    const cmd: RefundCommand = {
      v: 1,
      type: 'refund',
      request_id: requestIdFor(req, 'refund', programId),
      ts: Date.now(),
      program_id: programId,
      transaction_id: transactionId.trim(),
      refund_amount_cents: refundAmount,
      refund_reason: optString(b, 'refund_reason', 1000),
    };
    return dispatch(req, reply, 'refund', topics.refunds, cmd.transaction_id, cmd);
  };

  // ---- CLI status (spec 4.9) ----
  const cliStatus = async (req: FastifyRequest) => {
    const programId = await requireTrackingToken(req, cache);
    const p = await cache.getProgram(programId);
    if (!p || p.deleted) throw new HttpError(401, 'Invalid tracking token');
    return {
      success: true,
      program: { id: p.id, name: p.name, slug: p.slug, status: p.status },
      api_token_masked: p.apiTokenMasked,
      server_time: new Date().toISOString(),
    };
  };

  const err = ERROR_SCHEMA;
  const retry = { ...err, description: 'Still processing past the deadline; retry (Retry-After header).' };
  const auth: Record<string, string[]>[] = [{ trackingToken: [] }];
  const leadSchema = {
    tags: ['tracking'],
    summary: 'Record a lead (signup)',
    description:
      'Server mode with a tracking token (the customer must belong to its program) or browser mode without one ' +
      '(the click_id proves attribution). Errors: 400 `click_id or customer_key is required`, ' +
      '`Customer not found. Provide a valid click_id or customer_key.`, `Customer does not belong to this program`, ' +
      '`Customer status cannot be updated to lead. Current status: <status>`; 401 invalid token; 500 `Lead tracking failed`.',
    security: [{}, { trackingToken: [] }] as Record<string, string[]>[],
    body: {
      type: 'object',
      properties: {
        click_id: { type: 'string' },
        customer_key: { type: 'string' },
        email: { type: 'string' },
        additional_data: {
          type: 'object',
          properties: {
            test_mode: { type: 'boolean' },
            program_id: { type: 'integer' },
            event_name: { type: 'string' },
          },
        },
      },
    },
    response: {
      200: {
        type: 'object',
        properties: {
          success: { type: 'boolean' },
          message: { type: 'string' },
          data: { type: 'object', additionalProperties: true },
        },
      },
      ...errorResponses(400, 401, 500),
      503: retry,
    },
  };
  const saleSchema = {
    tags: ['tracking'],
    summary: 'Record a sale',
    description:
      'Server only, tracking token required. 409 `Duplicate transaction_id. This sale has already been recorded.` ' +
      '(also `message`, `statusCode`): already recorded, do not retry. transaction_id is unique across all programs.',
    security: auth,
    body: {
      type: 'object',
      required: ['transaction_id', 'amount_cents'],
      properties: {
        transaction_id: { type: 'string' },
        amount_cents: { type: 'integer', minimum: 1, maximum: MAX_AMOUNT_CENTS },
        customer_key: { type: 'string' },
        click_id: { type: 'string' },
        currency: { type: 'string', description: 'ISO 4217, default USD' },
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
      500: err,
      503: retry,
    },
  };
  const refundSchema = {
    tags: ['tracking'],
    summary: 'Record a refund: reverse (full) or reduce (partial) the commission',
    security: auth,
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
      ...errorResponses(400, 401, 404, 500),
      503: retry,
    },
  };
  const routes: [string, FastifySchema, typeof lead][] = [
    ['lead', leadSchema, lead],
    ['sale', saleSchema, sale],
    ['refund', refundSchema, refund],
  ];
  for (const [name, schema, handler] of routes) {
    app.post(`/api/v1/track/${name}`, { schema, validatorCompiler: noValidation }, handler);
    app.post(
      `/api/tracking/${name}`,
      {
        schema: { ...schema, summary: `Compatibility alias of /api/v1/track/${name}`, deprecated: true },
        validatorCompiler: noValidation,
      },
      handler,
    );
  }
  app.get(
    '/api/v1/cli/status',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Program health check for a tracking token',
        security: auth,
        response: {
          200: {
            type: 'object',
            properties: {
              success: { type: 'boolean' },
              program: {
                type: 'object',
                properties: {
                  id: { type: 'integer' },
                  name: { type: 'string' },
                  slug: { type: 'string' },
                  status: { type: 'string' },
                },
              },
              api_token_masked: { type: ['string', 'null'] },
              server_time: { type: 'string', format: 'date-time' },
            },
          },
          401: err,
        },
      },
    },
    cliStatus,
  );
}
