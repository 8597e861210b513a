// The reversal step (spec 4.4, section 3 commission transitions): full refund → `reversed`, partial →
// `refunded`, already terminal → `skipped`, no commission → `no_commission`. The commission row is locked,
// so concurrent refunds of one sale deduct once (the deduction: shared/domain/refund.ts); the ledger entry
// and the notifications are effects published after commit.
import type { Tx } from '../../../shared/db/sql.ts';
import type { Effect, RefundCommand } from '../../../shared/contracts/commands.ts';
import { commissionEntryKey, parseCommand } from '../../../shared/contracts/commands.ts';
import { refundDeduction } from '../../../shared/domain/refund.ts';
import type { Applied, CommandApplier } from '../../../shared/pipeline/command-handler.ts';

export function createRefundApplier(): CommandApplier<RefundCommand> {
  return {
    kind: 'refund',
    parse: (bytes) => parseCommand<RefundCommand>(bytes, 'refund'),
    apply: applyRefund,
  };
}

async function applyRefund(tx: Tx, cmd: RefundCommand): Promise<Applied> {
  const programId = cmd.program_id;
  const [sale] = await tx<{ id: string; amount_cents: string; workspace_id: string | null }[]>`
    select s.id, s.amount_cents, p.workspace_id from sales s join programs p on p.id = s.program_id
    where s.transaction_id = ${cmd.transaction_id} and s.program_id = ${programId} and not s.is_test`;
  if (!sale) return { programId, statusCode: 404, body: { error: 'Sale not found for transaction_id' } };
  const [c] = await tx<
    {
      id: string;
      status: string;
      amount_cents: string;
      partner_id: string;
      partner_program_id: string;
      currency: string;
    }[]
  >`select id, status, amount_cents, partner_id, partner_program_id, currency
    from commissions where sale_id = ${sale.id} for no key update`;
  if (!c) {
    return {
      programId,
      statusCode: 200,
      body: { success: true, status: 'no_commission', message: 'This sale has no commission to reverse' },
    };
  }
  const commissionId = Number(c.id);
  if (c.status === 'reversed' || c.status === 'refunded') {
    return {
      programId,
      statusCode: 200,
      body: {
        success: true,
        status: 'skipped',
        reason: `Commission already ${c.status}`,
        commission_id: commissionId,
      },
    };
  }
  const saleAmount = Number(sale.amount_cents);
  const commission = Number(c.amount_cents);
  const { deduction, full } = refundDeduction(commission, saleAmount, cmd.refund_amount_cents);
  const status = full ? 'reversed' : 'refunded';
  const wasPaid = c.status === 'paid';
  await tx`
    update commissions set status = ${status}, deducted_cents = ${deduction}, refund_reason = ${cmd.refund_reason},
                           updated_at = now()
    where id = ${c.id}`;

  const partnerId = Number(c.partner_id);
  const dollars = (deduction / 100).toFixed(2);
  const reason = cmd.refund_reason ?? 'No reason given';
  const effects: Effect[] = [
    {
      topic: 'ledger',
      entry_key: commissionEntryKey(commissionId, 'refund'),
      kind: full ? 'commission_reversed' : 'commission_refunded',
      partner_id: partnerId,
      partner_program_id: Number(c.partner_program_id),
      commission_id: commissionId,
      amount_cents: -deduction,
      // Spec 3: the balance is clamped at zero unless the commission was already paid.
      clamp_at_zero: !wasPaid,
    },
    {
      topic: 'notifications',
      notification_key: `commission:${commissionId}:refund:partner`,
      recipient_type: 'partner',
      partner_id: partnerId,
      workspace_id: null,
      program_id: programId,
      kind: full ? 'commission_reversed' : 'commission_refunded',
      title: full ? 'A commission was reversed' : 'A commission was partly refunded',
      body: `A refund on sale ${cmd.transaction_id} deducted ${dollars} ${c.currency} from your commission. Reason: ${reason}`,
      data: {
        commission_id: commissionId,
        transaction_id: cmd.transaction_id,
        deduction_cents: deduction,
        refund_reason: cmd.refund_reason,
      },
      // CONTRACT "Mail": the refund notification is mailed to the partner too.
      mail: true,
    },
  ];
  if (wasPaid) {
    effects.push({
      topic: 'notifications',
      notification_key: `commission:${commissionId}:refund:advertiser`,
      recipient_type: 'advertiser',
      partner_id: partnerId,
      workspace_id: sale.workspace_id === null ? null : Number(sale.workspace_id),
      program_id: programId,
      kind: 'paid_commission_refunded',
      title: 'Manual review: a paid commission was refunded',
      body: `Commission ${commissionId} had already been paid when sale ${cmd.transaction_id} was refunded; ${dollars} ${c.currency} is now owed by the partner. Reason: ${reason}`,
      data: { commission_id: commissionId, transaction_id: cmd.transaction_id, deduction_cents: deduction },
    });
  }
  return {
    programId,
    statusCode: 200,
    body: { success: true, status, deductionAmount: deduction / 100, commission_id: commissionId },
    effects,
  };
}
