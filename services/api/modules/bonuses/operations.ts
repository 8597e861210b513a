// Creating a bonus, one transaction (the unit-of-work rule: docs/architecture.md): the groups it names
// checked under their share locks, the bonus, the progress partners made since it starts, and a commission
// for each partner and period already at its threshold (the lifecycle's `awardBonuses`, its credits applied
// in this transaction and its events and notices through the outbox).
import type { Sql } from '../../../../shared/db/sql.ts';
import * as lifecycle from '../../../../shared/commissions/lifecycle.ts';
import { recordCaused } from '../../../../shared/commissions/caused.ts';
import { markAwarded } from '../../../../shared/rewards/bonuses.ts';
import * as dal from './dal.ts';
import { groupIdsError } from './service.ts';
import type { BonusInput } from './service.ts';

export function createBonus(
  sql: Sql,
  ctx: { kafkaPrefix: string },
  programId: number,
  b: BonusInput,
): Promise<number | { error: string }> {
  return sql.begin(async (tx) => {
    const error = groupIdsError(b.groupIds, await dal.lockGroups(tx, programId));
    if (error !== null) return { error };
    const id = await dal.insertBonus(tx, programId, b);
    const reached = await dal.backfillProgress(tx, id);
    const made = await lifecycle.awardBonuses(
      tx,
      reached.map((r) => ({
        bonus_id: id,
        bonus_period: r.period,
        program_id: Number(r.program_id),
        partner_id: r.partner_id,
        partner_program_id: r.partner_program_id,
        amount_cents: Number(r.amount_cents),
        currency: r.currency,
        group_id: Number(r.group_id),
        at_ts: Date.now(),
        hold_days: r.hold_days,
      })),
    );
    await markAwarded(
      tx,
      reached.map((r) => ({ bonusId: id, ppId: r.partner_program_id, period: r.period })),
    );
    await recordCaused(tx, { kafkaPrefix: ctx.kafkaPrefix }, made.caused);
    return id;
  });
}
