// The daily per-program rollup (program_daily_stats), incremented in the transaction of the events it
// counts. Calendar days are UTC.
import type { Tx } from './db.ts';

export interface DailyDelta {
  leads?: number;
  conversions?: number;
  sales?: number;
  revenue_cents?: number;
  commission_cents?: number;
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export async function addDaily(tx: Tx, programId: number, dayMs: number, d: DailyDelta): Promise<void> {
  await tx`
    insert into program_daily_stats (program_id, day, leads, conversions, sales, revenue_cents, commission_cents)
    values (${programId}, ${utcDay(dayMs)}, ${d.leads ?? 0}, ${d.conversions ?? 0}, ${d.sales ?? 0},
            ${d.revenue_cents ?? 0}, ${d.commission_cents ?? 0})
    on conflict (program_id, day) do update set
      leads = program_daily_stats.leads + excluded.leads,
      conversions = program_daily_stats.conversions + excluded.conversions,
      sales = program_daily_stats.sales + excluded.sales,
      revenue_cents = program_daily_stats.revenue_cents + excluded.revenue_cents,
      commission_cents = program_daily_stats.commission_cents + excluded.commission_cents`;
}
