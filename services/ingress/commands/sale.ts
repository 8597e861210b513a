// The input rules of a sale (spec 4.3): the body's fields and their exact 400s, test-mode defaults, and
// the command produced for the attribution worker. Pure; the route (routes/sale.ts) authenticates.
import { HttpError } from '../../../shared/http/server.ts';
import { MAX_AMOUNT_CENTS } from '../../../shared/domain/money.ts';
import type { SaleCommand } from '../../../shared/contracts/commands.ts';
import { MAX_ID, optString } from '../input.ts';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

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

/** The body's required and typed fields, in the order their errors are reported. */
export function parseSaleBody(
  b: Record<string, unknown>,
  testMode: boolean,
  mintTestTxn: () => string = testTransactionId,
): SaleFields {
  let transactionId = b.transaction_id;
  if ((transactionId === undefined || transactionId === null) && testMode) transactionId = mintTestTxn();
  if (typeof transactionId !== 'string' || transactionId.trim() === '' || transactionId.length > MAX_ID) {
    throw new HttpError(400, 'transaction_id is required and must be a string');
  }
  let amount = b.amount_cents;
  if ((amount === undefined || amount === null) && testMode) amount = 0;
  if (!(Number.isSafeInteger(amount) && ((amount as number) > 0 || (testMode && amount === 0)))) {
    throw new HttpError(400, 'amount_cents is required and must be a positive integer');
  }
  if ((amount as number) > MAX_AMOUNT_CENTS) {
    throw new HttpError(400, `amount_cents must be at most ${MAX_AMOUNT_CENTS}`);
  }
  // Omitted: the program's currency (the worker knows it; the spec's default USD is the default program's).
  const currencyRaw = b.currency ?? null;
  if (
    currencyRaw !== null &&
    (typeof currencyRaw !== 'string' || !CURRENCIES.has(currencyRaw.toUpperCase()))
  ) {
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
  if (!testMode && customerKey === null && clickId === null) {
    throw new HttpError(400, 'Customer not found. Provide customer_key or click_id.');
  }
  return {
    transaction_id: transactionId.trim(),
    amount_cents: amount as number,
    currency: currencyRaw === null ? null : currencyRaw.toUpperCase(),
    customer_key: customerKey,
    click_id: clickId,
    sale_type: saleType,
    line_items: lineItems,
    is_recurring: isRecurring,
    subscription_interval: interval,
    is_test: testMode,
  };
}

/** The command; reads the remaining optional fields (subscription_id, product_id), so it can still throw. */
export function buildSaleCommand(
  fields: SaleFields,
  b: Record<string, unknown>,
  ctx: { requestId: string; ts: number; programId: number },
): SaleCommand {
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
    subscription_id: optString(b, 'subscription_id'),
    subscription_interval: fields.subscription_interval,
    product_id: optString(b, 'product_id'),
    is_test: fields.is_test,
  };
}

/**
 * Keyed by customer: one customer's sales stay in one partition, so chunks on different partitions rarely
 * wait for each other's customer rows (correctness does not depend on it).
 */
export function saleKey(cmd: SaleCommand): string {
  return cmd.customer_key ?? cmd.click_id ?? cmd.transaction_id;
}
