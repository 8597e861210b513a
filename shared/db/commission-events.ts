// `commission.updated` webhook events (CONTRACT "Webhooks to integrators": every status change and review
// hold, with the new status), written in the transaction of the change from the rows as they now are. One
// writer for every such change outside the command workers: the approval sweep, approve, reject, mark-paid
// and payouts (docs/payouts.md).
import type { Tx } from './sql.ts';
import { recordWebhookEvents } from './webhook-events.ts';
import { commissionData } from '../webhooks/event-data.ts';

interface Row {
  id: string;
  workspace_id: string | null;
  program_id: string;
  partner_id: string;
  sale_id: string;
  customer_id: string | null;
  status: string;
  amount_cents: string;
  deducted_cents: string;
  currency: string;
  refund_reason: string | null;
  review_reason: string | null;
  payable_at: Date | null;
  payout_id: string | null;
  paid_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** The event's `data`: the shape of `commission.created` (one builder), with the payout fields. */
export function commissionEventData(r: Row): Record<string, unknown> {
  return commissionData(r, {
    review_reason: r.review_reason,
    payable_at: iso(r.payable_at),
    payout_id: r.payout_id === null ? null : Number(r.payout_id),
  });
}

/** Records one `commission.updated` per commission, reading the rows in `tx` (after the change). */
export async function recordCommissionUpdates(
  tx: Tx,
  kafkaPrefix: string,
  commissionIds: number[],
): Promise<void> {
  if (commissionIds.length === 0) return;
  const rows = await tx<Row[]>`
    select c.id, p.workspace_id, c.program_id, c.partner_id, c.sale_id, c.customer_id, c.status, c.amount_cents,
           c.deducted_cents, c.currency, c.refund_reason, c.review_reason, c.payable_at, c.payout_id, c.paid_at,
           c.created_at, c.updated_at
    from commissions c join programs p on p.id = c.program_id
    where c.id = any(${commissionIds}::bigint[])
    order by c.id`;
  await recordWebhookEvents(
    tx,
    kafkaPrefix,
    rows
      .filter((r) => r.workspace_id !== null)
      .map((r) => ({
        type: 'commission.updated' as const,
        workspace_id: Number(r.workspace_id),
        program_id: Number(r.program_id),
        data: commissionEventData(r),
      })),
  );
}
