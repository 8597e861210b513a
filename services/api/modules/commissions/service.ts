// The rules of commissions, pure: the statuses, which of them may be marked paid, approved or rejected, and
// the ledger entries a payment or a rejection writes (a payment -amount_cents, never clamped; a rejection
// reverses the commission like a full refund, clamped as an unpaid commission's deduction is).
import type { LedgerEffect } from '../../../../shared/contracts/commands.ts';
import { commissionEntryKey } from '../../../../shared/contracts/commands.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { iso } from '../../common.ts';
import type { CommissionRow, LockedCommission } from './dal.ts';

export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'reversed', 'refunded'] as const;
export type CommissionStatus = (typeof COMMISSION_STATUSES)[number];
/** The listing's filters: a status, or `review` (held for review, not yet approved or rejected). */
export const COMMISSION_FILTERS = [...COMMISSION_STATUSES, 'review'] as const;
export type CommissionFilter = (typeof COMMISSION_FILTERS)[number];
export const REVIEW_REASONS = ['self_referral', 'partner_ip'] as const;
const PAYABLE: readonly CommissionStatus[] = ['pending', 'approved'];

export const ERR = {
  notFound: 'Commission not found',
  status: `status must be one of ${COMMISSION_FILTERS.join(', ')}`,
  limit: 'limit must be an integer from 1 to 1000',
  offset: 'offset must be a non-negative integer',
  reason: 'reason must be a string of at most 500 characters',
  notHeld: 'Commission is not held for review',
  held: 'Commission is held for review: approve or reject it first',
  inPayout: (payoutId: string | number) =>
    `Commission is in pending payout ${payoutId}: mark the payout paid or cancel it`,
} as const;

/** A commission in `status` may be marked paid; otherwise the 409 saying why not. */
export function checkPayable(status: CommissionStatus): void {
  if (PAYABLE.includes(status)) return;
  throw new HttpError(
    409,
    status === 'paid' ? 'Commission is already paid' : `A ${status} commission cannot be marked paid`,
  );
}

/**
 * A commission may be marked paid on its own only when it is payable, not held for review, and in no
 * payout: a payout pays its commissions together, and one paid alone would be paid twice.
 */
export function checkPayableAlone(c: Pick<LockedCommission, 'status' | 'review_reason' | 'payout_id'>): void {
  checkPayable(c.status);
  if (c.payout_id !== null) throw new HttpError(409, ERR.inPayout(c.payout_id));
  if (c.review_reason !== null) throw new HttpError(409, ERR.held);
}

/** Approve clears a review hold; only a held commission that is still unpaid can be approved. */
export function checkApprovable(c: Pick<LockedCommission, 'status' | 'review_reason' | 'paid_at'>): void {
  if (c.status === 'reversed') throw new HttpError(409, 'A reversed commission cannot be approved');
  if (c.review_reason === null || c.paid_at !== null) throw new HttpError(409, ERR.notHeld);
}

/**
 * Reject reverses an unpaid commission that has had no deduction (pending or approved, held or not) and is
 * in no payout; its deduction is the commission's one refund entry, so a later refund finds it reversed.
 */
export function checkRejectable(c: Pick<LockedCommission, 'status' | 'payout_id'>): void {
  if (c.status === 'reversed') throw new HttpError(409, 'Commission is already reversed');
  if (c.status === 'paid') throw new HttpError(409, 'A paid commission cannot be rejected');
  if (c.status === 'refunded') throw new HttpError(409, 'A refunded commission cannot be rejected');
  if (c.payout_id !== null) throw new HttpError(409, ERR.inPayout(c.payout_id));
}

/** The refund_reason of a rejection. */
export const rejectionReason = (reason: string | null | undefined): string => {
  const r = reason?.trim();
  return r ? `rejected: ${r}` : 'rejected';
};

/** The ledger entry of a payment: keyed by the commission, so it can never apply twice. */
export function paidEntry(
  commissionId: number,
  c: { amount_cents: string; partner_id: string; partner_program_id: string },
): LedgerEffect {
  return {
    topic: 'ledger',
    entry_key: commissionEntryKey(commissionId, 'paid'),
    kind: 'commission_paid',
    partner_id: Number(c.partner_id),
    partner_program_id: Number(c.partner_program_id),
    commission_id: commissionId,
    amount_cents: -Number(c.amount_cents),
    clamp_at_zero: false,
  };
}

/**
 * The ledger entry of a rejection: the commission's refund entry (a later refund is skipped), the whole
 * amount, clamped as the deduction of an unpaid commission (it waits for the credit if that is not in yet).
 */
export function rejectedEntry(
  commissionId: number,
  c: { amount_cents: string; partner_id: string; partner_program_id: string },
): LedgerEffect {
  return {
    topic: 'ledger',
    entry_key: commissionEntryKey(commissionId, 'refund'),
    kind: 'commission_reversed',
    partner_id: Number(c.partner_id),
    partner_program_id: Number(c.partner_program_id),
    commission_id: commissionId,
    amount_cents: -Number(c.amount_cents),
    clamp_at_zero: true,
  };
}

export const toCommission = (r: CommissionRow) => ({
  id: Number(r.id),
  status: r.status,
  amount_cents: Number(r.amount_cents),
  currency: r.currency,
  sale_id: Number(r.sale_id),
  partner_id: Number(r.partner_id),
  refund_reason: r.refund_reason,
  deducted_cents: Number(r.deducted_cents),
  review_reason: r.review_reason,
  payable_at: iso(r.payable_at),
  payout_id: r.payout_id === null ? null : Number(r.payout_id),
  paid_at: iso(r.paid_at),
  created_at: iso(r.created_at)!,
});
