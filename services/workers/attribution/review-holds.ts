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
 * - `self_referral`: the customer's email (from the lead) is the email of the commission's partner record or
 *   of a partner account that claimed it, compared case-insensitively;
 * - `partner_ip`: the attributing click (the customer's last click up to the sale) came from the IP address
 *   of a sign-in of an account that claimed the partner record: both are stored as keyed hashes
 *   (click_events.ip_hash, partner_sign_ins.ip_hash), never as addresses.
 * self_referral wins when both hold. Commissions without either never touch the partner tables twice: the
 * claims are read only for the chunk's partners that have any.
 */
export async function holdForReview(tx: Tx, commissionIds: number[]): Promise<Map<number, ReviewReason>> {
  if (commissionIds.length === 0) return new Map();
  const rows = await tx<{ id: string; review_reason: ReviewReason }[]>`
    update commissions c set review_reason = h.reason
    from (
      select c.id,
             case
               when cu.email is not null
                    and (lower(btrim(cu.email)) = lower(btrim(pa.email))
                         or exists (select 1 from partner_claims pc join partner_accounts a on a.id = pc.account_id
                                    where pc.partner_id = c.partner_id
                                      and lower(a.email) = lower(btrim(cu.email))))
                 then 'self_referral'
               when exists (select 1 from partner_claims pc where pc.partner_id = c.partner_id)
                    and (select ce.ip_hash from click_events ce
                         where ce.click_id = cu.click_id and ce.click_timestamp <= s.sale_date
                         order by ce.click_timestamp desc limit 1)
                        in (select si.ip_hash from partner_sign_ins si
                            join partner_claims pc on pc.account_id = si.account_id
                            where pc.partner_id = c.partner_id and si.ip_hash is not null)
                 then 'partner_ip'
             end as reason
      from commissions c
      join customers cu on cu.id = c.customer_id
      join partners pa on pa.id = c.partner_id
      join sales s on s.id = c.sale_id
      where c.id = any(${commissionIds}::bigint[])
    ) h
    where c.id = h.id and h.reason is not null
    returning c.id, c.review_reason`;
  return new Map(rows.map((r) => [Number(r.id), r.review_reason]));
}
