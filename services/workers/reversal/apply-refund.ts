// The reversal step (spec 4.4, section 3 commission transitions): the sale found, its commission refunded
// by the lifecycle (shared/commissions `refund`: full → `reversed`, partial → `refunded`, paid → a clawback,
// already refunded → `skipped`), no commission → `no_commission`. The commission row is locked, so
// concurrent refunds of one sale deduct once. In the transaction: `sale.refunded`, `commission.updated` and
// the notifications (outbox rows); the ledger entry is the command's effect, published after the commit.
import type { Tx } from '../../../shared/db/sql.ts';
import type { RefundCommand } from '../../../shared/contracts/commands.ts';
import { parseCommand } from '../../../shared/contracts/commands.ts';
import type { Applied, CommandApplier } from '../../../shared/pipeline/command-handler.ts';
import type { WebhookEventInput } from '../../../shared/db/webhook-events.ts';
import { saleRefundedView } from '../../../shared/views/sale.ts';
import type { SaleViewRow } from '../../../shared/views/sale.ts';
import * as lifecycle from '../../../shared/commissions/lifecycle.ts';
import { merge, nothing, recordCaused } from '../../../shared/commissions/caused.ts';
import { refundRewards } from '../../../shared/rewards/refunds.ts';

export interface RefundApplierOptions {
  /** KAFKA_PREFIX: the outbox topic of the `sale.refunded` and `commission.updated` webhook events. */
  kafkaPrefix: string;
}

export function createRefundApplier(opts: RefundApplierOptions): CommandApplier<RefundCommand> {
  return {
    kind: 'refund',
    parse: (bytes) => parseCommand<RefundCommand>(bytes, 'refund'),
    apply: (tx, cmd, ctx) => applyRefund(tx, cmd, opts.kafkaPrefix, ctx.memo),
  };
}

async function applyRefund(
  tx: Tx,
  cmd: RefundCommand,
  kafkaPrefix: string,
  memo: Map<string, unknown>,
): Promise<Applied> {
  const programId = cmd.program_id;
  const [sale] = await tx<
    (SaleViewRow & {
      id: string;
      amount_cents: string;
      workspace_id: string | null;
      partner_program_id: string | null;
    })[]
  >`
    select s.id, s.program_id, s.transaction_id, s.amount_cents, s.currency, s.sale_type, s.is_recurring,
           s.subscription_id, s.product_id, s.customer_id, s.customer_key, s.partner_id, s.is_test, s.sale_date,
           s.created_at, s.coupon_code, p.workspace_id, s.partner_program_id
    from sales s join programs p on p.id = s.program_id
    where s.transaction_id = ${cmd.transaction_id} and s.program_id = ${programId} and not s.is_test`;
  if (!sale) return { programId, statusCode: 404, body: { error: 'Sale not found for transaction_id' } };
  const saleCents = Number(sale.amount_cents);
  const requested = cmd.refund_amount_cents;
  // The sale's `sale.refunded`, before its commission's `commission.updated`.
  const saleRefunded = (
    commissionId: number | null,
    status: string | null,
    deduction: number,
  ): WebhookEventInput[] =>
    sale.workspace_id === null
      ? []
      : [
          {
            type: 'sale.refunded',
            workspace_id: Number(sale.workspace_id),
            program_id: programId,
            data: saleRefundedView(sale, commissionId, {
              refund_amount_cents: Math.min(requested ?? saleCents, saleCents),
              refund_reason: cmd.refund_reason,
              commission_status: status,
              deduction_cents: deduction,
              at: new Date(),
            }),
          },
        ];
  const ctx = { kafkaPrefix, memo, ledger: 'after-commit' as const };
  // The partner's figures and the tier ladder (shared/rewards/refunds.ts), whatever became of the commission.
  const rewards = (deduction: number) =>
    refundRewards(
      tx,
      { kafkaPrefix, memo },
      { ...sale, amount_cents: saleCents },
      Math.min(requested ?? saleCents, saleCents),
      deduction,
    );

  const refunded = await lifecycle.refund(tx, sale.id, {
    sale_cents: saleCents,
    refund_cents: requested,
    reason: cmd.refund_reason,
  });
  if (!refunded) {
    await rewards(0);
    await recordCaused(tx, ctx, { ...nothing(), events: saleRefunded(null, null, 0) });
    return {
      programId,
      statusCode: 200,
      body: { success: true, status: 'no_commission', message: 'This sale has no commission to reverse' },
    };
  }
  if ('refused' in refunded) {
    await rewards(0);
    return {
      programId,
      statusCode: 200,
      body: { success: true, status: 'skipped', reason: refunded.refused, commission_id: refunded.state.id },
    };
  }
  const { row } = refunded;
  const commissionId = Number(row.id);
  const deduction = Number(row.deducted_cents);
  await rewards(deduction);
  const effects = await recordCaused(
    tx,
    ctx,
    merge({ ...nothing(), events: saleRefunded(commissionId, row.status, deduction) }, refunded.caused),
  );
  return {
    programId,
    statusCode: 200,
    body: {
      success: true,
      status: row.status,
      deductionAmount: deduction / 100,
      commission_id: commissionId,
    },
    effects,
  };
}
