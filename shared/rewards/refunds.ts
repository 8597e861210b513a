// A refund's part in the rewards (CONTRACT part four "Tiers"; docs/rewards.md), in the refund's transaction
// (services/workers/reversal, and the processor worker's refunds through it): the partner's figures lose the
// sale's refunded amount (once per sale, whatever number of refunds are sent: sales.refunded_cents) and what
// the refund took of its commission, and so does its progress towards bonuses counting sales_cents (a bonus
// commission made stays); then, as after a sale, a partner whose figures reach a threshold moves up (a rule
// added after it crossed). A refund never moves a partner back.
import type { Tx } from '../db/sql.ts';
import { LIFETIME, monthOf, periodOf, tierMoves } from '../domain/tiers.ts';
import type { Metrics } from '../domain/tiers.ts';
import { addMetrics, lockMetrics, metricKey, tierRulesOf } from './metrics.ts';
import { movePartners } from './moves.ts';
import { addProgress, bonusesOf } from './bonuses.ts';
import { bonusCounts, bonusPeriodOf } from '../domain/bonuses.ts';
import type { MoveContext } from './moves.ts';

export interface RefundedSale {
  id: string | number;
  program_id: string | number;
  /** Null: the sale was attributed to nobody. */
  partner_program_id: string | number | null;
  amount_cents: number;
  sale_date: Date | string;
  is_test: boolean;
}

/**
 * Applies the refund to the partner's figures: `refundCents` of the sale (counted by its first refund only)
 * and `deductionCents` of its commission; then the ladder. Locks the sale's row, then the partner's figures
 * (key order), then what a move locks (moves.ts).
 */
export async function refundRewards(
  tx: Tx,
  ctx: MoveContext,
  sale: RefundedSale,
  refundCents: number,
  deductionCents: number,
): Promise<void> {
  if (sale.is_test || sale.partner_program_id === null) return;
  const [first] = await tx<{ id: string }[]>`
    update sales set refunded_cents = ${refundCents} where id = ${sale.id} and refunded_cents is null returning id`;
  const saleCents = first ? refundCents : 0;
  const ppId = String(sale.partner_program_id);
  const at = new Date();
  const saleMonth = monthOf(new Date(sale.sale_date));
  const keys = [...new Set([LIFETIME, saleMonth, monthOf(at)])].map((period) => ({ ppId, period }));
  const locked = await lockMetrics(tx, keys);
  const delta = (period: string): Metrics =>
    period === LIFETIME || period === saleMonth
      ? { sales_cents: -saleCents, customers: 0, commission_cents: -deductionCents }
      : { sales_cents: 0, customers: 0, commission_cents: 0 };
  await addMetrics(
    tx,
    keys.map((k) => ({ ...k, ...delta(k.period) })),
  );
  const programId = Number(sale.program_id);
  // Bonuses counting sales_cents lose the refunded sale too (a bonus already made is kept).
  const saleAt = new Date(sale.sale_date);
  if (saleCents > 0) {
    const [priced] = await tx<{ group_id: string | null }[]>`
      select coalesce(c.group_id, pp.group_id) as group_id
      from partner_programs pp left join commissions c on c.sale_id = ${sale.id}
      where pp.id = ${ppId}`;
    const groupId = priced?.group_id == null ? null : Number(priced.group_id);
    const bonuses = ((await bonusesOf(tx, [programId], saleAt)).get(programId) ?? []).filter(
      (b) => b.metric === 'sales_cents' && bonusCounts(b, groupId, saleAt),
    );
    await addProgress(
      tx,
      bonuses.map((b) => ({ bonusId: b.id, ppId, period: bonusPeriodOf(b, saleAt), delta: -saleCents })),
    );
  }
  const rules = (await tierRulesOf(tx, [programId])).get(programId) ?? [];
  if (rules.length === 0) return;
  const [pp] = await tx<{ group_id: string; group_locked: boolean }[]>`
    select group_id, group_locked from partner_programs where id = ${ppId}`;
  if (!pp || pp.group_locked) return;
  const now = (period: string): Metrics => {
    const m = locked.get(metricKey({ ppId, period }))!;
    const d = delta(period);
    return {
      sales_cents: m.sales_cents + d.sales_cents,
      customers: m.customers,
      commission_cents: m.commission_cents + d.commission_cents,
    };
  };
  for (const r of tierMoves(rules, Number(pp.group_id), (w) => now(periodOf(w, at)))) {
    await movePartners(tx, ctx, [
      {
        ppId: Number(ppId),
        fromGroupId: r.fromGroupId,
        toGroupId: r.toGroupId,
        reason: 'tier_rule',
        ruleId: r.id,
        pinCustomers: !r.carryExistingCustomers,
      },
    ]);
  }
}
