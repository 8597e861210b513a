// The rules of payouts, pure (CONTRACT part two "Holding, reviewing and paying out"; docs/payouts.md): who is
// paid how much, which status changes of a payout are allowed, and the payout as the API shows it (its view,
// shared/views/payout.ts, which its events carry too). What a payment does to its commissions (their status,
// its ledger entries) is the commission lifecycle's (shared/commissions/states.ts `payInPayout`,
// `recoveryEntry`).
import { HttpError } from '../../../../shared/http/server.ts';
import { PAYOUT_STATUSES, payoutMethodOf } from '../../../../shared/views/payout.ts';
import type { Payout, PayoutMethod, PayoutStatus } from '../../../../shared/views/payout.ts';

export { PAYOUT_STATUSES, payoutMethodOf };
export type { Payout, PayoutMethod, PayoutStatus };
export const EXPORT_FORMATS = ['paypal', 'wise', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const ERR = {
  notFound: 'Payout not found',
  status: `status must be one of ${PAYOUT_STATUSES.join(', ')}`,
  format: `format must be one of ${EXPORT_FORMATS.join(', ')}`,
  limit: 'limit must be an integer from 1 to 1000',
  offset: 'offset must be a non-negative integer',
  reference: 'reference must be a string of at most 200 characters',
  partnerIds: 'partner_ids must be an array of at most 1000 positive integers',
  alreadyPaid: 'Payout already paid',
  paidCannotCancel: 'A paid payout cannot be canceled',
  alreadyCanceled: 'Payout already canceled',
  canceledCannotPay: 'A canceled payout cannot be marked paid',
} as const;

/** A commission that a new payout may take (unpaid, in no payout, payable, its partner approved). */
export interface Candidate {
  id: number;
  partner_id: number;
  partner_program_id: number;
  /** Its amount less its deductions: what the payout counts for it. */
  net_cents: number;
  currency: string;
}

/** A payout to create: one partner-program's candidates, less what it recovers of earlier clawbacks. */
export interface PlannedPayout {
  partner_id: number;
  partner_program_id: number;
  currency: string;
  commission_ids: number[];
  /** What the payout counts for each commission, in commission_ids' order. */
  commission_cents: number[];
  commissions_cents: number;
  recovered_cents: number;
  amount_cents: number;
}

/** A partner-program left out because its payout would be below the program's minimum (it carries over). */
export interface BelowMinimum {
  partner_id: number;
  partner_program_id: number;
  amount_cents: number;
  commissions_cents: number;
  recovered_cents: number;
  commission_ids: number[];
}

/**
 * The payouts of one run: per partner-program (one currency: the program's), its candidates' net amounts
 * (commissions_cents), less the clawbacks it still owes (`owed`: refunds of paid commissions that no payout
 * has recovered, less what pending payouts already set aside), never below zero: the recovery is at most
 * the commissions, and the rest of the clawback carries over to later payouts. A payout below
 * `minPayoutCents` is not made and its commissions wait for the next run.
 */
export function planPayouts(
  candidates: readonly Candidate[],
  owed: ReadonlyMap<number, number>,
  minPayoutCents: number,
): { payouts: PlannedPayout[]; belowMinimum: BelowMinimum[] } {
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const key = `${c.partner_program_id}:${c.currency}`;
    const g = groups.get(key);
    if (g) g.push(c);
    else groups.set(key, [c]);
  }
  const payouts: PlannedPayout[] = [];
  const belowMinimum: BelowMinimum[] = [];
  for (const group of groups.values()) {
    const sorted = [...group].sort((a, b) => a.id - b.id);
    const first = sorted[0]!;
    const commissions = sorted.reduce((s, c) => s + c.net_cents, 0);
    const recovered = Math.min(Math.max(owed.get(first.partner_program_id) ?? 0, 0), commissions);
    const amount = commissions - recovered;
    const ids = sorted.map((c) => c.id);
    if (amount < minPayoutCents) {
      belowMinimum.push({
        partner_id: first.partner_id,
        partner_program_id: first.partner_program_id,
        amount_cents: amount,
        commissions_cents: commissions,
        recovered_cents: recovered,
        commission_ids: ids,
      });
      continue;
    }
    payouts.push({
      partner_id: first.partner_id,
      partner_program_id: first.partner_program_id,
      currency: first.currency,
      commission_ids: ids,
      commission_cents: sorted.map((c) => c.net_cents),
      commissions_cents: commissions,
      recovered_cents: recovered,
      amount_cents: amount,
    });
  }
  payouts.sort((a, b) => a.partner_id - b.partner_id);
  belowMinimum.sort((a, b) => a.partner_id - b.partner_id);
  return { payouts, belowMinimum };
}

/** A pending payout may be marked paid; the 409 otherwise. */
export function checkPayable(status: PayoutStatus): void {
  if (status === 'paid') throw new HttpError(409, ERR.alreadyPaid);
  if (status === 'canceled') throw new HttpError(409, ERR.canceledCannotPay);
}

/** A pending payout may be canceled; the 409 otherwise. */
export function checkCancelable(status: PayoutStatus): void {
  if (status === 'paid') throw new HttpError(409, ERR.paidCannotCancel);
  if (status === 'canceled') throw new HttpError(409, ERR.alreadyCanceled);
}
