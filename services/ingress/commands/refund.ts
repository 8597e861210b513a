// The input rules of a refund (spec 4.4): the body's schema and the command produced for the reversal
// worker. Pure.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, bodyCheck } from '../../../shared/http/validation.ts';
import type { RefundCommand } from '../../../shared/contracts/commands.ts';
import { MAX_ID, OptString, trimmed } from '../input.ts';

// Property order is the order the errors are reported in (shared/http/validation.ts).
const refundFirst = {
  transaction_id: Type.String({
    maxLength: MAX_ID,
    pattern: '\\S',
    errorMessage: 'transaction_id is required',
    description: 'The transaction_id of the recorded sale.',
  }),
  refund_amount_cents: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Omitted or 0: full refund; more than the sale: full.',
      }),
      'refund_amount_cents must be a positive integer',
    ),
  ),
};
/** Read after the Idempotency-Key is checked, as it always was. */
const refundLast = { refund_reason: OptString('refund_reason', 1000) };

/** The refund body, as documented. */
export const RefundBody = Type.Object({ ...refundFirst, ...refundLast });
/** The fields the route's schema validation checks (after authentication: the token comes first). */
export const RefundFirst = Type.Object(refundFirst);
const checkRefundLast = bodyCheck(Type.Object(refundLast));

export interface RefundFields {
  transactionId: string;
  /** null = full refund (omitted or 0). */
  refundAmount: number | null;
}

/** What a checked refund body says. */
export function refundFields(b: Static<typeof RefundFirst>): RefundFields {
  return { transactionId: b.transaction_id.trim(), refundAmount: b.refund_amount_cents || null };
}

/** The command; checks refund_reason last, so it can still throw a 400. */
export function buildRefundCommand(
  fields: RefundFields,
  body: unknown,
  ctx: { requestId: string; ts: number; programId: number },
): RefundCommand {
  return {
    v: 1,
    type: 'refund',
    request_id: ctx.requestId,
    ts: ctx.ts,
    program_id: ctx.programId,
    transaction_id: fields.transactionId,
    refund_amount_cents: fields.refundAmount,
    refund_reason: trimmed(checkRefundLast(body).refund_reason),
  };
}
