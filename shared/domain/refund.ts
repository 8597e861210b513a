// A refund's deduction from its commission (CONTRACT "Refund"): proportional to the refunded share of the
// sale, round half up in cents; a refund of the whole sale or more (or of no stated amount) is full.
import { mulDivRoundHalfUp } from './money.ts';

/** The cents to deduct and whether the refund is full (the commission `reversed`, else `refunded`). */
export function refundDeduction(
  commissionCents: number,
  saleCents: number,
  refundCents: number | null,
): { deduction: number; full: boolean } {
  const full = refundCents === null || refundCents >= saleCents;
  return {
    deduction: full ? commissionCents : mulDivRoundHalfUp(commissionCents, refundCents, saleCents),
    full,
  };
}
