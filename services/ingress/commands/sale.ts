// The input rules of a sale (spec 4.3): the body's schema and its exact 400s, test-mode defaults, and the
// command produced for the attribution worker. Pure; the route (routes/sale.ts) authenticates.
import { Type } from '@sinclair/typebox';
import { HttpError } from '../../../shared/http/server.ts';
import { Checked, Nullable, StringEnum, bodyCheck } from '../../../shared/http/validation.ts';
import { CURRENCY_CODES, MAX_AMOUNT_CENTS, currencyPattern } from '../../../shared/domain/money.ts';
import type { SaleCommand } from '../../../shared/contracts/commands.ts';
import { CommandAdditionalData, MAX_ID, OptString, trimmed } from '../input.ts';

const TXN_ERROR = 'transaction_id is required and must be a string';
const AMOUNT_ERROR = 'amount_cents is required and must be a positive integer';

/** Why amount_cents is refused (test mode: omitted is 0, and 0 is allowed), or null. */
export function amountError(v: unknown, testMode: boolean): string | null {
  const amount = (v === undefined || v === null) && testMode ? 0 : v;
  if (!(Number.isSafeInteger(amount) && ((amount as number) > 0 || (testMode && amount === 0)))) {
    return AMOUNT_ERROR;
  }
  return (amount as number) > MAX_AMOUNT_CENTS ? `amount_cents must be at most ${MAX_AMOUNT_CENTS}` : null;
}

/** Why a currency is refused (not an ISO 4217 code, in any case), or null; omitted or null is fine. */
export function currencyError(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' && CURRENCY_CODES.has(v.toUpperCase())
    ? null
    : 'currency must be an ISO 4217 code';
}

const TransactionId = Type.String({
  maxLength: MAX_ID,
  pattern: '\\S',
  errorMessage: TXN_ERROR,
  description:
    'Unique across all programs. Required unless additional_data.test_mode, where omitted is minted ' +
    '(`test_txn_<timestamp>`).',
});

/** The fields checked after authentication, in the order their errors are reported; test mode is laxer. */
function saleFields(testMode: boolean) {
  const amount = Checked<number | null>(
    {
      type: testMode ? ['integer', 'null'] : 'integer',
      minimum: testMode ? 0 : 1,
      maximum: MAX_AMOUNT_CENTS,
      description: 'In cents. At least 1; in test mode 0 is allowed and omitted means 0.',
    },
    (v) => amountError(v, testMode),
  );
  return {
    transaction_id: testMode ? Type.Optional(Nullable(TransactionId, TXN_ERROR)) : TransactionId,
    amount_cents: testMode ? Type.Optional(amount) : amount,
    currency: Type.Optional(
      Checked<string | null>(
        {
          type: ['string', 'null'],
          pattern: currencyPattern(false),
          description:
            "ISO 4217 (any case); must be the program's currency (400 otherwise); omitted: the program's " +
            'currency (USD by default).',
        },
        currencyError,
      ),
    ),
    sale_type: Type.Optional(
      Nullable(
        StringEnum(['payment', 'subscription'], "sale_type must be 'payment' or 'subscription'", {
          default: 'payment',
        }),
      ),
    ),
    subscription_interval: Type.Optional(
      Nullable(
        StringEnum(
          ['monthly', 'quarterly', 'annual'],
          "subscription_interval must be 'monthly', 'quarterly' or 'annual'",
        ),
      ),
    ),
    is_recurring: Type.Optional(Nullable(Type.Boolean({ default: false }), 'is_recurring must be a boolean')),
    line_items: Type.Optional(
      Type.Union([Type.Object({}), Type.Array(Type.Unknown()), Type.Null()], {
        errorMessage: 'line_items must be an object',
        description: 'Stored as given.',
      }),
    ),
    customer_key: OptString('customer_key'),
    click_id: OptString('click_id'),
  };
}
/** Read after the Idempotency-Key is checked, as they always were. */
const saleLast = {
  subscription_id: OptString('subscription_id'),
  product_id: OptString('product_id'),
  coupon_code: OptString(
    'coupon_code',
    MAX_ID,
    "A partner code (docs/codes.md), matched case-insensitively against the program's active codes; an unknown or inactive code attributes nothing.",
  ),
};

/**
 * The sale body, as documented: the live form, whose transaction_id and amount_cents are required (the spec's
 * "yes (optional in test mode)"); their descriptions say what test mode relaxes. Only documentation: the
 * route checks SaleFirst, then the live or test form by `additional_data.test_mode`.
 */
export const SaleBody = Type.Object({
  additional_data: CommandAdditionalData,
  ...saleFields(false),
  ...saleLast,
});
/** What is checked before authentication: test mode decides whether a token is needed. */
export const SaleFirst = Type.Object({ additional_data: CommandAdditionalData });
const checkSaleFields = {
  live: bodyCheck(Type.Object(saleFields(false))),
  test: bodyCheck(Type.Object(saleFields(true))),
};
const checkSaleLast = bodyCheck(Type.Object(saleLast));

let lastTestTxnMs = 0;
let testTxnSeq = 0;
/**
 * `test_txn_<timestamp>` (spec 4.3), unique across ingress processes: `node` is the process's instance node
 * (the snowflake node every ingress takes from a Postgres sequence at boot, also what makes click ids
 * instance-safe) and follows the timestamp; a per-process sequence follows when two are minted in one
 * millisecond. Without a node (unit tests) only the per-process part.
 */
export function testTransactionId(now = Date.now(), node: number | null = null): string {
  const base = node === null ? `test_txn_${now}` : `test_txn_${now}_${node}`;
  if (now === lastTestTxnMs) return `${base}_${++testTxnSeq}`;
  lastTestTxnMs = now;
  testTxnSeq = 0;
  return base;
}

/** A test sale without a valid token names its program in additional_data.program_id. */
export function testSaleProgram(tokenProgram: number | null, adProgramId: number | null): number {
  const pid = tokenProgram ?? adProgramId;
  if (pid === null) {
    throw new HttpError(
      400,
      'additional_data.program_id is required for a test sale without a tracking token',
    );
  }
  return pid;
}

export type SaleFields = Omit<
  SaleCommand,
  'v' | 'type' | 'request_id' | 'ts' | 'program_id' | 'subscription_id' | 'product_id'
>;

/** The fields checked after authentication, with test mode's defaults, in the order errors are reported. */
export function parseSaleBody(
  body: unknown,
  testMode: boolean,
  mintTestTxn: () => string = testTransactionId,
): SaleFields {
  const b = (testMode ? checkSaleFields.test : checkSaleFields.live)(body);
  const customerKey = trimmed(b.customer_key);
  const clickId = trimmed(b.click_id);
  // Not in the schema: "one of two, after trimming", and only outside test mode.
  if (!testMode && customerKey === null && clickId === null) {
    throw new HttpError(400, 'Customer not found. Provide customer_key or click_id.');
  }
  return {
    transaction_id: (b.transaction_id ?? mintTestTxn()).trim(),
    amount_cents: b.amount_cents ?? 0,
    // Omitted: the program's currency (the worker knows it; the spec's default USD is the default program's).
    currency: b.currency ? b.currency.toUpperCase() : null,
    customer_key: customerKey,
    click_id: clickId,
    sale_type: b.sale_type ?? 'payment',
    line_items: b.line_items ?? null,
    is_recurring: b.is_recurring ?? false,
    subscription_interval: b.subscription_interval ?? null,
    is_test: testMode,
  };
}

/** The command; checks the remaining optional fields (subscription_id, product_id), so it can still throw. */
export function buildSaleCommand(
  fields: SaleFields,
  body: unknown,
  ctx: { requestId: string; ts: number; programId: number },
): SaleCommand {
  const last = checkSaleLast(body);
  return {
    v: 1,
    type: 'sale',
    request_id: ctx.requestId,
    ts: ctx.ts,
    program_id: ctx.programId,
    transaction_id: fields.transaction_id,
    amount_cents: fields.amount_cents,
    currency: fields.currency,
    customer_key: fields.customer_key,
    click_id: fields.click_id,
    sale_type: fields.sale_type,
    line_items: fields.line_items,
    is_recurring: fields.is_recurring,
    subscription_id: trimmed(last.subscription_id),
    subscription_interval: fields.subscription_interval,
    product_id: trimmed(last.product_id),
    is_test: fields.is_test,
    ...(trimmed(last.coupon_code) === null ? {} : { coupon_code: trimmed(last.coupon_code) }),
  };
}

/**
 * Keyed by customer: one customer's sales stay in one partition, so chunks on different partitions rarely
 * wait for each other's customer rows (correctness does not depend on it).
 */
export function saleKey(cmd: SaleCommand): string {
  return cmd.customer_key ?? cmd.click_id ?? cmd.transaction_id;
}
