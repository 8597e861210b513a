// SQL of commissions. Mark paid: the status change and its `commission_paid` ledger entry commit in ONE
// transaction, through the ledger's own code (shared/db/ledger.ts).
import type { Sql } from '../../../../shared/db/sql.ts';
import type { LedgerEffect } from '../../../../shared/contracts/commands.ts';
import { applyLedgerEntries } from '../../../../shared/db/ledger.ts';

type Status = 'pending' | 'approved' | 'paid' | 'reversed' | 'refunded';

export interface CommissionRow {
  id: string;
  status: Status;
  amount_cents: string;
  currency: string;
  sale_id: string;
  partner_id: string;
  refund_reason: string | null;
  paid_at: Date | null;
  created_at: Date;
}

export function commissionsOfProgram(
  sql: Sql,
  programId: number,
  q: { status: string | undefined; limit: number; offset: number },
) {
  return sql<CommissionRow[]>`
    select id, status, amount_cents, currency, sale_id, partner_id, refund_reason, paid_at, created_at
    from commissions
    where program_id = ${programId} ${q.status === undefined ? sql`` : sql`and status = ${q.status}`}
    order by created_at desc, id desc
    limit ${q.limit} offset ${q.offset}`;
}

export async function programOfCommission(sql: Sql, commissionId: number): Promise<number | undefined> {
  const [found] = await sql<{ program_id: string }[]>`
    select program_id from commissions where id = ${commissionId}`;
  return found ? Number(found.program_id) : undefined;
}

/**
 * Status → paid and the ledger entry, in one transaction. The commission row is locked first (the
 * reversal worker locks it too, so a concurrent refund sees either the unpaid commission, and `check` then
 * refuses, or the paid one, and deducts without clamping); the ledger step then locks the partner and the
 * partner-program in the order every balance writer uses. Undefined when the commission is gone.
 */
export function markPaid(
  sql: Sql,
  commissionId: number,
  rules: {
    check: (status: Status) => void;
    entry: (c: { amount_cents: string; partner_id: string; partner_program_id: string }) => LedgerEffect;
  },
): Promise<CommissionRow | undefined> {
  return sql.begin(async (tx) => {
    const [c] = await tx<
      { status: Status; amount_cents: string; partner_id: string; partner_program_id: string }[]
    >`select status, amount_cents, partner_id, partner_program_id from commissions
      where id = ${commissionId} for no key update`;
    if (!c) return undefined;
    rules.check(c.status);
    const [row] = await tx<CommissionRow[]>`
      update commissions set status = 'paid', paid_at = now(), updated_at = now()
      where id = ${commissionId}
      returning id, status, amount_cents, currency, sale_id, partner_id, refund_reason, paid_at, created_at`;
    // The ledger's locks, entry_key check and balance writes commit or roll back with the status change.
    await applyLedgerEntries(tx, [rules.entry(c)]);
    return row;
  });
}
