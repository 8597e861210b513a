// SQL of commissions. Mark paid, approve and reject each commit the commission's change, its ledger entry
// (through the ledger's own code, shared/db/ledger.ts) and its `commission.updated` event in ONE transaction.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { LedgerEffect } from '../../../../shared/contracts/commands.ts';
import { applyLedgerEntries } from '../../../../shared/db/ledger.ts';
import { recordCommissionUpdates } from '../../../../shared/db/commission-events.ts';
import { notify } from '../../../../shared/db/notifications.ts';
import type { NotifyContext } from '../../../../shared/db/notifications.ts';
import { beginRetrying } from '../../../../shared/db/transactions.ts';

type Status = 'pending' | 'approved' | 'paid' | 'reversed' | 'refunded';

export interface CommissionRow {
  id: string;
  status: Status;
  amount_cents: string;
  currency: string;
  sale_id: string;
  partner_id: string;
  refund_reason: string | null;
  deducted_cents: string;
  review_reason: 'self_referral' | 'partner_ip' | null;
  payable_at: Date | null;
  payout_id: string | null;
  paid_at: Date | null;
  created_at: Date;
}

const COLUMNS = (sql: Sql | Tx) =>
  sql`id, status, amount_cents, currency, sale_id, partner_id, refund_reason, deducted_cents, review_reason,
      payable_at, payout_id, paid_at, created_at`;

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
    select ${COLUMNS(sql)}
    from commissions
    where program_id = ${programId} ${filter}
    order by created_at desc, id desc
    limit ${q.limit} offset ${q.offset}`;
}

export async function programOfCommission(sql: Sql, commissionId: number): Promise<number | undefined> {
  const [found] = await sql<{ program_id: string }[]>`
    select program_id from commissions where id = ${commissionId}`;
  return found ? Number(found.program_id) : undefined;
}

/** A commission as a write reads it under its row lock. */
export interface LockedCommission {
  status: Status;
  amount_cents: string;
  partner_id: string;
  partner_program_id: string;
  program_id: string;
  review_reason: string | null;
  payout_id: string | null;
  paid_at: Date | null;
  payable_at: Date | null;
}

/**
 * The commission row, locked. The reversal worker locks it too, so a concurrent refund sees the commission
 * before this change (and deducts as for it) or after it, never half of it; payout writes lock it as well.
 */
async function lockCommission(tx: Tx, commissionId: number): Promise<LockedCommission | undefined> {
  const [c] = await tx<LockedCommission[]>`
    select status, amount_cents, partner_id, partner_program_id, program_id, review_reason, payout_id, paid_at,
           payable_at
    from commissions where id = ${commissionId} for no key update`;
  return c;
}

async function readCommission(tx: Tx, commissionId: number): Promise<CommissionRow> {
  const [row] = await tx<CommissionRow[]>`select ${COLUMNS(tx)} from commissions where id = ${commissionId}`;
  return row!;
}

/**
 * Status → paid and the ledger entry, in one transaction. The commission row is locked first; the ledger
 * step then locks the partner and the partner-program in the order every balance writer uses. Undefined
 * when the commission is gone.
 */
export function markPaid(
  sql: Sql,
  commissionId: number,
  rules: {
    check: (c: LockedCommission) => void;
    entry: (c: LockedCommission) => LedgerEffect;
    kafkaPrefix: string;
  },
): Promise<CommissionRow | undefined> {
  return beginRetrying(sql, async (tx) => {
    const c = await lockCommission(tx, commissionId);
    if (!c) return undefined;
    rules.check(c);
    await tx`
      update commissions set status = 'paid', paid_at = now(), updated_at = now() where id = ${commissionId}`;
    // The ledger's locks, entry_key check and balance writes commit or roll back with the status change.
    await applyLedgerEntries(tx, [rules.entry(c)]);
    await recordCommissionUpdates(tx, rules.kafkaPrefix, [commissionId]);
    return readCommission(tx, commissionId);
  });
}

/**
 * Clears the review hold; a commission whose payable_at has passed is approved at once (the sweep would
 * have approved it but for the hold), one not yet due stays pending for the sweep.
 */
export function approve(
  sql: Sql,
  commissionId: number,
  rules: { check: (c: LockedCommission) => void; kafkaPrefix: string },
): Promise<CommissionRow | undefined> {
  return beginRetrying(sql, async (tx) => {
    const c = await lockCommission(tx, commissionId);
    if (!c) return undefined;
    rules.check(c);
    await tx`
      update commissions
      set review_reason = null,
          status = case when status = 'pending' and coalesce(payable_at, created_at) <= now() then 'approved'
                        else status end,
          updated_at = now()
      where id = ${commissionId}`;
    await recordCommissionUpdates(tx, rules.kafkaPrefix, [commissionId]);
    return readCommission(tx, commissionId);
  });
}

/**
 * Reverses the commission as a full refund would: status reversed, deducted_cents = amount, refund_reason,
 * its deduction applied to the balances (held until its credit is in, as any deduction is), the partner
 * told in-app, and `commission.updated`, in one transaction.
 */
export function reject(
  sql: Sql,
  commissionId: number,
  rules: {
    check: (c: LockedCommission) => void;
    entry: (c: LockedCommission) => LedgerEffect;
    refundReason: string;
    notify: NotifyContext;
  },
): Promise<CommissionRow | undefined> {
  return beginRetrying(sql, async (tx) => {
    const c = await lockCommission(tx, commissionId);
    if (!c) return undefined;
    rules.check(c);
    const [row] = await tx<{ currency: string; transaction_id: string }[]>`
      update commissions c set status = 'reversed', deducted_cents = c.amount_cents,
                               refund_reason = ${rules.refundReason}, updated_at = now()
      from sales s where c.id = ${commissionId} and s.id = c.sale_id
      returning trim(c.currency) as currency, s.transaction_id`;
    await applyLedgerEntries(tx, [rules.entry(c)]);
    const dollars = (Number(c.amount_cents) / 100).toFixed(2);
    await notify(tx, rules.notify, [
      {
        notification_key: `commission:${commissionId}:rejected:partner`,
        recipient_type: 'partner',
        partner_id: Number(c.partner_id),
        workspace_id: null,
        program_id: Number(c.program_id),
        kind: 'commission_rejected',
        title: 'A commission was rejected',
        body: `Your commission of ${dollars} ${row!.currency} on sale ${row!.transaction_id} was rejected after review. Reason: ${rules.refundReason.replace(/^rejected(: )?/, '') || 'No reason given'}`,
        data: {
          commission_id: commissionId,
          transaction_id: row!.transaction_id,
          refund_reason: rules.refundReason,
        },
      },
    ]);
    await recordCommissionUpdates(tx, rules.notify.kafkaPrefix, [commissionId]);
    return readCommission(tx, commissionId);
  });
}
