// Why a new commission waits for the advertiser's review (CONTRACT part two, "Holding, reviewing and paying
// out"; docs/payouts.md "Review holds"). One rule per reason, in precedence order (the first that holds
// wins), each a SQL condition over the new commission `c`, its customer `cu`, its partner `pa` and its sale
// `s`. Adding a reason is adding its rule here (and widening the column's check constraint, 0017_payouts.sql,
// with a migration): the API's enum, the listing filter, the hold statement and the lifecycle read this list.
// Decided once, in the transaction that creates the commission (lifecycle.ts `create`).
import type { PendingQuery, Row } from 'postgres';
import type { Sql, Tx } from '../db/sql.ts';

type Fragment = PendingQuery<Row[]>;

interface ReviewRule {
  reason: string;
  /** True when the commission needs review for this reason. */
  when: (sql: Sql | Tx) => Fragment;
}

export const REVIEW_RULES = [
  {
    // The customer's email (from the lead) is the email of the commission's partner record or of a partner
    // account that claimed it, compared case-insensitively.
    reason: 'self_referral',
    when: (sql) => sql`
      cu.email is not null
      and (lower(btrim(cu.email)) = lower(btrim(pa.email))
           or exists (select 1 from partner_claims pc join partner_accounts a on a.id = pc.account_id
                      where pc.partner_id = c.partner_id and lower(a.email) = lower(btrim(cu.email))))`,
  },
  {
    // The attributing click (the customer's last click up to the sale) came from the IP address of a sign-in
    // of an account that claimed the partner record: both stored as keyed hashes, never as addresses. The
    // claims are read only for partners that have any.
    reason: 'partner_ip',
    when: (sql) => sql`
      exists (select 1 from partner_claims pc where pc.partner_id = c.partner_id)
      and (select ce.ip_hash from click_events ce
           where ce.click_id = cu.click_id and ce.click_timestamp <= s.sale_date
           order by ce.click_timestamp desc limit 1)
          in (select si.ip_hash from partner_sign_ins si
              join partner_claims pc on pc.account_id = si.account_id
              where pc.partner_id = c.partner_id and si.ip_hash is not null)`,
  },
] as const satisfies readonly ReviewRule[];

export type ReviewReason = (typeof REVIEW_RULES)[number]['reason'];
export const REVIEW_REASONS: readonly ReviewReason[] = REVIEW_RULES.map((r) => r.reason);

/** The reason each of these commissions must be held for (absent: none), with one statement. */
export async function reviewReasons(tx: Tx, commissionIds: number[]): Promise<Map<number, ReviewReason>> {
  if (commissionIds.length === 0) return new Map();
  const cases = REVIEW_RULES.reduce(
    (acc, rule) => tx`${acc} when ${rule.when(tx)} then ${rule.reason}::text`,
    tx``,
  );
  const rows = await tx<{ id: string; reason: ReviewReason | null }[]>`
    select c.id, case ${cases} end as reason
    from commissions c
    join customers cu on cu.id = c.customer_id
    join partners pa on pa.id = c.partner_id
    join sales s on s.id = c.sale_id
    where c.id = any(${commissionIds}::bigint[])`;
  return new Map(rows.flatMap((r) => (r.reason === null ? [] : [[Number(r.id), r.reason] as const])));
}
