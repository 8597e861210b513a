// The input rules of a refund (spec 4.4) and the command produced for the reversal worker. Pure.
import { HttpError } from '../../../shared/http/server.ts';
import type { RefundCommand } from '../../../shared/contracts/commands.ts';
import { MAX_ID, optString } from '../input.ts';

export interface RefundFields {
  transactionId: string;
  /** null = full refund (omitted or 0). */
  refundAmount: number | null;
}

export function parseRefundBody(b: Record<string, unknown>): RefundFields {
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
  return { transactionId: transactionId.trim(), refundAmount };
}

/** The command; reads refund_reason last, so it can still throw a 400. */
export function buildRefundCommand(
  fields: RefundFields,
  b: Record<string, unknown>,
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
    refund_reason: optString(b, 'refund_reason', 1000),
  };
}
