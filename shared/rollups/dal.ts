// The rollups' one incremental writer: the daily per-program rollup (program_daily_stats) and its breakdown
// by partner, link, country, device, browser, OS, referrer and landing page (program_daily_breakdown and
// its weeks, under the keys of rules.ts), incremented in the transaction of the events they count. Calendar
// days are UTC. Workers collect deltas over a chunk (RollupBuffer, with its BreakdownBuffer) and write them
// once, in key order, as the transaction's last statements. The rebuild (rebuild.ts) rewrites a day from
// the raw events instead.
import type { Tx } from '../db/sql.ts';
import {
  DIMENSIONS,
  FIELDS,
  KEYS_PER_DAY,
  OTHER_KEY,
  UNKNOWN_KEY,
  VISIT_DIMENSIONS,
  addCounters,
  utcDay,
  zeroCounters,
} from './rules.ts';
import type { BreakdownDelta, Dimension, DimensionKeys } from './rules.ts';

export interface DailyDelta {
  clicks?: number;
  leads?: number;
  conversions?: number;
  sales?: number;
  revenue_cents?: number;
  commission_cents?: number;
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

// ---------------------------------------------------------------------------------------------------
// The breakdown's buffer

interface Row extends BreakdownDelta {
  programId: number;
  day: string;
  dimension: Dimension;
  key: string;
}

const CAPPED: ReadonlySet<string> = new Set(VISIT_DIMENSIONS);
const ALWAYS_ADMITTED: ReadonlySet<string> = new Set([UNKNOWN_KEY, OTHER_KEY]);

const compareRows = (a: Row, b: Row): number =>
  a.programId - b.programId ||
  (a.dimension < b.dimension ? -1 : a.dimension > b.dimension ? 1 : 0) ||
  (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) ||
  (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Deltas of one transaction, summed per (program, day, dimension, key): one row per distinct key, written
 * by one statement, however many events the chunk holds.
 */
export class BreakdownBuffer {
  private readonly rows = new Map<string, Row>();

  get size(): number {
    return this.rows.size;
  }

  add(programId: number, day: string, keys: DimensionKeys, d: Partial<BreakdownDelta>): void {
    for (const dimension of DIMENSIONS) {
      const key = keys[dimension];
      if (key === undefined) continue;
      const id = `${programId}\u0000${day}\u0000${dimension}\u0000${key}`;
      let row = this.rows.get(id);
      if (!row) {
        row = { programId, day, dimension, key, ...zeroCounters() };
        this.rows.set(id, row);
      }
      for (const f of FIELDS) row[f] += d[f] ?? 0;
    }
  }

  merge(other: BreakdownBuffer): void {
    for (const r of other.rows.values()) this.add(r.programId, r.day, { [r.dimension]: r.key }, r);
  }

  /**
   * Writes the rows: the capped keys of each (program, day, visit dimension) not yet in the table are
   * admitted while the day has fewer than KEYS_PER_DAY, in key order, the rest merged into `other`; then
   * one upsert, in key order.
   *
   * The caller must hold the program_daily_stats rows of these (program, day)s (RollupBuffer.flush upserts
   * them first): every writer does, so the count read here cannot change before this transaction commits,
   * and a key is either admitted for a whole day or never (the check relies on it).
   */
  async flush(tx: Tx): Promise<void> {
    if (this.rows.size === 0) return;
    const rows = await this.admit(tx, [...this.rows.values()]);
    rows.sort(compareRows);
    const col = <K extends keyof Row>(k: K) => rows.map((r) => r[k]);
    // The week's row (0018_weekly_breakdown.sql) in the same statement: it gets the same deltas, after the
    // cap, so it always equals the sum of its days. Both in key order (the weeks' rows grouped and sorted),
    // so two writers of one week lock its rows in the same order.
    await tx`
      with u as (
        select * from unnest(${col('programId')}::bigint[], ${col('dimension')}::text[], ${col('day')}::date[],
                             ${col('key')}::text[], ${col('clicks')}::bigint[], ${col('leads')}::bigint[],
                             ${col('conversions')}::bigint[], ${col('sales')}::bigint[],
                             ${col('revenue_cents')}::bigint[], ${col('commission_cents')}::bigint[])
                      as u(program_id, dimension, day, key, clicks, leads, conversions, sales, revenue_cents,
                           commission_cents)
      ), daily as (
        insert into program_daily_breakdown (program_id, dimension, day, key, clicks, leads, conversions, sales,
                                             revenue_cents, commission_cents)
        select * from u
        on conflict (program_id, dimension, day, key) do update set
          ${tx.unsafe(addCounters('program_daily_breakdown'))}
      )
      insert into program_weekly_breakdown (program_id, dimension, week, key, clicks, leads, conversions, sales,
                                            revenue_cents, commission_cents)
      select program_id, dimension, day - extract(isodow from day)::int + 1, key, sum(clicks), sum(leads),
             sum(conversions), sum(sales), sum(revenue_cents), sum(commission_cents)
      from u group by 1, 2, 3, 4 order by 1, 2, 3, 4
      on conflict (program_id, dimension, week, key) do update set
        ${tx.unsafe(addCounters('program_weekly_breakdown'))}`;
  }

  /** The rows with every capped key past its day's allowance turned into `other` (merged). */
  private async admit(tx: Tx, rows: Row[]): Promise<Row[]> {
    const asked = rows.filter((r) => CAPPED.has(r.dimension) && !ALWAYS_ADMITTED.has(r.key));
    if (asked.length === 0) return rows;
    const found = await tx<
      { program_id: string; day: string; dimension: string; n: number; present: string[] }[]
    >`
      select g.p::text as program_id, g.d::text as day, g.dim as dimension, c.n::int as n,
             array(select b.key from program_daily_breakdown b
                   where b.program_id = g.p and b.dimension = g.dim and b.day = g.d and b.key = any(g.keys)) as present
      from (select p, d, dim, array_agg(k) as keys
            from unnest(${asked.map((r) => r.programId)}::bigint[], ${asked.map((r) => r.day)}::date[],
                        ${asked.map((r) => r.dimension)}::text[], ${asked.map((r) => r.key)}::text[]) as i(p, d, dim, k)
            group by p, d, dim) g
      cross join lateral (
        select count(*) as n from program_daily_breakdown b
        where b.program_id = g.p and b.dimension = g.dim and b.day = g.d and b.key <> all(${[...ALWAYS_ADMITTED]}::text[])
      ) c`;
    const groups = new Map<string, { room: number; present: Set<string> }>();
    for (const f of found) {
      groups.set(`${f.program_id}\u0000${f.day}\u0000${f.dimension}`, {
        room: KEYS_PER_DAY - f.n,
        present: new Set(f.present),
      });
    }
    const refused = new Set<Row>();
    for (const r of [...asked].sort(compareRows)) {
      const g = groups.get(`${r.programId}\u0000${r.day}\u0000${r.dimension}`)!;
      if (g.present.has(r.key)) continue;
      if (g.room > 0) {
        g.room--;
        g.present.add(r.key);
      } else refused.add(r);
    }
    if (refused.size === 0) return rows;
    const out = new BreakdownBuffer();
    for (const r of rows)
      out.add(r.programId, r.day, { [r.dimension]: refused.has(r) ? OTHER_KEY : r.key }, r);
    return [...out.rows.values()];
  }
}
