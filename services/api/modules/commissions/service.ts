// The rules of commissions, pure: the statuses, which of them may be marked paid, and the ledger entry a
// payment writes (amount -amount_cents, never clamped).
import type { LedgerEffect } from '../../../../shared/contracts/commands.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { iso } from '../../common.ts';
import type { CommissionRow } from './dal.ts';

export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'reversed', 'refunded'] as const;
export type CommissionStatus = (typeof COMMISSION_STATUSES)[number];
const PAYABLE: readonly CommissionStatus[] = ['pending', 'approved'];

export const ERR = {
  notFound: 'Commission not found',
  status: `status must be one of ${COMMISSION_STATUSES.join(', ')}`,
  limit: 'limit must be an integer from 1 to 1000',
  offset: 'offset must be a non-negative integer',
} as const;

/** A commission in `status` may be marked paid; otherwise the 409 saying why not. */
export function checkPayable(status: CommissionStatus): void {
  if (PAYABLE.includes(status)) return;
  throw new HttpError(
    409,
    status === 'paid' ? 'Commission is already paid' : `A ${status} commission cannot be marked paid`,
  );
}

/** The ledger entry of a payment: keyed by the commission, so it can never apply twice. */
export function paidEntry(
  commissionId: number,
  c: { amount_cents: string; partner_id: string; partner_program_id: string },
): LedgerEffect {
  return {
    topic: 'ledger',
    entry_key: `commission:${commissionId}:paid`,
    kind: 'commission_paid',
    partner_id: Number(c.partner_id),
    partner_program_id: Number(c.partner_program_id),
    commission_id: commissionId,
    amount_cents: -Number(c.amount_cents),
    clamp_at_zero: false,
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
  paid_at: iso(r.paid_at),
  created_at: iso(r.created_at)!,
});
