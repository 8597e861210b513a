// Commissions written as the sale applier writes them (a sale, its commission, its credit in the ledger),
// without a click and a sale through the pipeline each: for the tests that need many of them quickly and
// then race real API calls and real refunds over them.
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../shared/db/sql.ts';
import type { CommissionState } from '../../shared/commissions/states.ts';
import { applyLedgerEntries } from '../../shared/ledger/dal.ts';
import { commissionEntryKey } from '../../shared/ledger/rules.ts';

export interface SeededCommission {
  id: number;
  transactionId: string;
  saleCents: number;
  amountCents: number;
}

/**
 * Sales of `saleCents` each with commissions of `amountCents` (status `approved`, payable now unless
 * `status` says otherwise), their credits applied to the balances in the same transaction.
 */
export async function seedCommissions(
  sql: Sql,
  p: { programId: number; partnerId: number; partnerProgramId: number },
  items: {
    saleCents: number;
    amountCents: number;
    status?: 'pending' | 'approved';
    payableInDays?: number;
  }[],
): Promise<SeededCommission[]> {
  return sql.begin(async (tx) => {
    const out: SeededCommission[] = [];
    for (const item of items) {
      const transactionId = `seed-${randomBytes(6).toString('hex')}`;
      const [sale] = await tx<{ id: string }[]>`
        insert into sales (request_id, program_id, partner_id, partner_program_id, transaction_id, amount_cents,
                           currency, sale_type, is_test, sale_date)
        values (${`req-${transactionId}`}, ${p.programId}, ${p.partnerId}, ${p.partnerProgramId}, ${transactionId},
                ${item.saleCents}, 'USD', 'payment', false, now())
        returning id`;
      const [c] = await tx<{ id: string }[]>`
        insert into commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, status,
                                 payable_at)
        values (${sale!.id}, ${p.programId}, ${p.partnerId}, ${p.partnerProgramId}, ${item.amountCents}, 'USD',
                ${item.status ?? 'approved'}, now() + make_interval(days => ${item.payableInDays ?? 0}))
        returning id`;
      const id = Number(c!.id);
      await applyLedgerEntries(tx, [
        {
          topic: 'ledger',
          entry_key: commissionEntryKey(id, 'created'),
          kind: 'commission_created',
          partner_id: p.partnerId,
          partner_program_id: p.partnerProgramId,
          commission_id: id,
          amount_cents: item.amountCents,
          clamp_at_zero: true,
        },
      ]);
      out.push({ id, transactionId, saleCents: item.saleCents, amountCents: item.amountCents });
    }
    return out;
  });
}

/**
 * A commission's state for the lifecycle's pure rules (shared/commissions/states.ts): an approved, due
 * commission of 5.00 USD outside any payout, with what a test changes laid over it.
 */
export function commissionState(over: Partial<CommissionState> = {}): CommissionState {
  return {
    id: 11,
    status: 'approved',
    amount_cents: 500,
    deducted_cents: 0,
    currency: 'USD',
    partner_id: 3,
    partner_program_id: 4,
    program_id: 1,
    workspace_id: 1,
    transaction_id: 'order_1',
    review_reason: null,
    payout_id: null,
    paid_at: null,
    due: true,
    ...over,
  };
}
