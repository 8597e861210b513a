// The daily per-program rollup (program_daily_stats), incremented in the transaction of the events it
// counts. Calendar days are UTC. Command workers collect deltas over a chunk (RollupBuffer) and write them
// once, in key order, as the transaction's last statement.
import type { Tx } from '../db/sql.ts';

export interface DailyDelta {
  leads?: number;
  conversions?: number;
  sales?: number;
  revenue_cents?: number;
  commission_cents?: number;
}

const FIELDS = ['leads', 'conversions', 'sales', 'revenue_cents', 'commission_cents'] as const;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class RollupBuffer {
  private readonly rows = new Map<string, { programId: number; day: string } & Required<DailyDelta>>();

  add(programId: number, dayMs: number, d: DailyDelta): void {
    const day = utcDay(dayMs);
    const key = `${programId}:${day}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { programId, day, leads: 0, conversions: 0, sales: 0, revenue_cents: 0, commission_cents: 0 };
      this.rows.set(key, row);
    }
    for (const f of FIELDS) row[f] += d[f] ?? 0;
  }

  merge(other: RollupBuffer): void {
    for (const r of other.rows.values()) this.add(r.programId, Date.parse(`${r.day}T00:00:00Z`), r);
  }

  async flush(tx: Tx): Promise<void> {
    if (this.rows.size === 0) return;
    const rows = [...this.rows.values()].sort(
      (a, b) => a.programId - b.programId || (a.day < b.day ? -1 : 1),
    );
    await tx`
      insert into program_daily_stats (program_id, day, leads, conversions, sales, revenue_cents, commission_cents)
      select * from unnest(${rows.map((r) => r.programId)}::bigint[], ${rows.map((r) => r.day)}::date[],
                           ${rows.map((r) => r.leads)}::bigint[], ${rows.map((r) => r.conversions)}::bigint[],
                           ${rows.map((r) => r.sales)}::bigint[], ${rows.map((r) => r.revenue_cents)}::bigint[],
                           ${rows.map((r) => r.commission_cents)}::bigint[])
      on conflict (program_id, day) do update set
        leads = program_daily_stats.leads + excluded.leads,
        conversions = program_daily_stats.conversions + excluded.conversions,
        sales = program_daily_stats.sales + excluded.sales,
        revenue_cents = program_daily_stats.revenue_cents + excluded.revenue_cents,
        commission_cents = program_daily_stats.commission_cents + excluded.commission_cents`;
  }
}
