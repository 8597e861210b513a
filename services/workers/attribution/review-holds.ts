// When a commission is payable, and whether it waits for the advertiser's review first (CONTRACT part two,
// "Holding, reviewing and paying out"; docs/payouts.md). Decided once, in the transaction that creates the
// commission: a held commission stays `pending` past payable_at until it is approved or rejected.
import type { Tx } from '../../../shared/db/sql.ts';

export type ReviewReason = 'self_referral' | 'partner_ip';

const DAY_MS = 86_400_000;

/** The sale's time plus the program's hold (ISO): when the sweep may approve the commission. */
export function payableAt(saleTs: number, holdDays: number): string {
  return new Date(saleTs + holdDays * DAY_MS).toISOString();
}

/**
 * Marks the new commissions that need review, with one statement, and returns their reasons by id:
 * - `self_referral`: the customer's email (from the lead) is the email of the commission's partner record,
 *   compared case-insensitively.
 * Commissions without a customer email are never self-referrals.
 */
export async function holdForReview(tx: Tx, commissionIds: number[]): Promise<Map<number, ReviewReason>> {
  if (commissionIds.length === 0) return new Map();
  const rows = await tx<{ id: string; review_reason: ReviewReason }[]>`
    update commissions c set review_reason = h.reason
    from (
      select c.id,
             case when lower(btrim(cu.email)) = lower(btrim(pa.email)) then 'self_referral' end as reason
      from commissions c
      join customers cu on cu.id = c.customer_id
      join partners pa on pa.id = c.partner_id
      where c.id = any(${commissionIds}::bigint[]) and cu.email is not null
    ) h
    where c.id = h.id and h.reason is not null
    returning c.id, c.review_reason`;
  return new Map(rows.map((r) => [Number(r.id), r.review_reason]));
}
