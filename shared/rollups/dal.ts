// The daily per-program rollup (program_daily_stats) and its breakdown by partner, link, country, device,
// browser, OS, referrer and landing page (program_daily_breakdown, rules.ts), incremented in the
// transaction of the events they count. Calendar days are UTC. Workers collect deltas over a chunk
// (RollupBuffer) and write them once, in key order, as the transaction's last statements.
import type { Tx } from '../db/sql.ts';
import { BreakdownBuffer, FIELDS, addCounters, zeroCounters } from './rules.ts';
import type { DimensionKeys } from './rules.ts';

export interface DailyDelta {
  clicks?: number;
  leads?: number;
  conversions?: number;
  sales?: number;
  revenue_cents?: number;
  commission_cents?: number;
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export interface RollupOptions {
  /**
   * Write program_daily_breakdown too (default true). Off only to measure what those writes cost
   * (bench:clicks --no-breakdown): the breakdown is then missing the events applied meanwhile.
   */
  breakdown?: boolean;
}

export class RollupBuffer {
  private readonly rows = new Map<string, { programId: number; day: string } & Required<DailyDelta>>();
  private readonly breakdown: BreakdownBuffer | null;

  constructor(opts: RollupOptions = {}) {
    this.breakdown = opts.breakdown === false ? null : new BreakdownBuffer();
  }

  /**
   * Adds `d` to the program's day, and to the key of each dimension in `keys` (the event's partner, link,
   * country, ...: rules.ts visitKeys for a click, customerKeys for what a customer does).
   */
  add(programId: number, dayMs: number, d: DailyDelta, keys?: DimensionKeys): void {
    const day = utcDay(dayMs);
    this.addDay(programId, day, d);
    if (keys !== undefined) this.breakdown?.add(programId, day, keys, d);
  }

  private addDay(programId: number, day: string, d: DailyDelta): void {
    const key = `${programId}:${day}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { programId, day, ...zeroCounters() };
      this.rows.set(key, row);
    }
    for (const f of FIELDS) row[f] += d[f] ?? 0;
  }

  merge(other: RollupBuffer): void {
    for (const r of other.rows.values()) this.addDay(r.programId, r.day, r);
    if (other.breakdown) this.breakdown?.merge(other.breakdown);
  }

  /**
   * program_daily_stats first: its (program, day) rows, locked in key order, are what serialises every
   * writer of those days' breakdown rows (BreakdownBuffer.flush relies on it).
   */
  async flush(tx: Tx): Promise<void> {
    if (this.rows.size === 0) return;
    const rows = [...this.rows.values()].sort(
      (a, b) => a.programId - b.programId || (a.day < b.day ? -1 : 1),
    );
    const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
    await tx`
      insert into program_daily_stats (program_id, day, clicks, leads, conversions, sales, revenue_cents, commission_cents)
      select * from unnest(${col('programId')}::bigint[], ${col('day')}::date[], ${col('clicks')}::bigint[],
                           ${col('leads')}::bigint[], ${col('conversions')}::bigint[], ${col('sales')}::bigint[],
                           ${col('revenue_cents')}::bigint[], ${col('commission_cents')}::bigint[])
      on conflict (program_id, day) do update set ${tx.unsafe(addCounters('program_daily_stats'))}`;
    await this.breakdown?.flush(tx);
  }
}
