// The commissions API's reads: a program's commissions (or its review queue) and a commission's program.
// Every write of a commission is a transition of the lifecycle (shared/commissions), called from
// operations.ts.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { CommissionStatus, ReviewReason } from '../../../../shared/commissions/states.ts';
import type { PricedRule } from '../../../../shared/domain/commission-policy.ts';

export interface CommissionRow {
  id: string;
  status: CommissionStatus;
  amount_cents: string;
  currency: string;
  /** Null for a bonus's commission (bonus_id). */
  sale_id: string | null;
  program_id: string;
  partner_id: string;
  customer_id: string | null;
  refund_reason: string | null;
  deducted_cents: string;
  review_reason: ReviewReason | null;
  payable_at: Date | null;
  payout_id: string | null;
  paid_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** The code that attributed its sale (docs/codes.md); null: none. */
  coupon_code?: string | null;
  /** What priced it (docs/rewards.md); null on rows seeded without them. */
  group_id: string | null;
  rule: PricedRule | null;
  bonus_id: string | null;
}

/** The code that attributed the commission's sale, in SQL over `commissions` (docs/codes.md). */
const COUPON = (sql: Sql | Tx) => sql`
  (select s.coupon_code from sales s where s.id = commissions.sale_id and s.partner_code_id is not null)
    as coupon_code`;

const COLUMNS = (sql: Sql | Tx) =>
  sql`id, status, amount_cents, currency, sale_id, program_id, partner_id, customer_id, refund_reason,
      deducted_cents, review_reason, payable_at, payout_id, paid_at, created_at, updated_at, group_id, rule,
      bonus_id`;

/** `review`: held for review and not yet decided (pending, or partly refunded and unpaid). */
export function commissionsOfProgram(
  sql: Sql,
  programId: number,
  q: { status: string | undefined; limit: number; offset: number },
) {
  const filter =
    q.status === undefined
      ? sql``
      : q.status === 'review'
        ? sql`and review_reason is not null and status in ('pending', 'refunded') and paid_at is null`
        : sql`and status = ${q.status}`;
  return sql<CommissionRow[]>`
    select ${COLUMNS(sql)}, ${COUPON(sql)}
    from commissions
    where program_id = ${programId} ${filter}
    order by created_at desc, id desc
    limit ${q.limit} offset ${q.offset}`;
}

/** The commission's coupon_code (COUPON), for the answers of its transitions. */
export async function couponCodeOf(sql: Sql, commissionId: number): Promise<string | null> {
  const [row] = await sql<{ coupon_code: string | null }[]>`
    select ${COUPON(sql)} from commissions where id = ${commissionId}`;
  return row?.coupon_code ?? null;
}

export async function programOfCommission(sql: Sql, commissionId: number): Promise<number | undefined> {
  const [found] = await sql<{ program_id: string }[]>`
    select program_id from commissions where id = ${commissionId}`;
  return found ? Number(found.program_id) : undefined;
}
