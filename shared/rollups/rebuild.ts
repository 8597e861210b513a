// The rebuild of the dimensional rollups (program_daily_breakdown, program_weekly_breakdown) from the raw
// events (raw.ts), one (program, day) at a time in its caller's transaction, safe while the workers run; and
// the rows of the resumable run of `npm run rollups -- --rebuild` (table rollup_rebuilds: the last day done,
// recorded in the day's transaction). The transactions are opened by operations.ts.
import type { Sql, Tx } from '../db/sql.ts';
import { ATTR_COLUMNS, VISIT_DIMENSIONS, visitKeySql } from './rules.ts';
import { capKeys, rawBreakdown } from './raw.ts';
import type { DayRange, Db, KeyRow } from './raw.ts';

/**
 * Sets the visit keys of the program's customers that have a click but no keys yet (created before
 * 0014_rollups.sql) from their first click event; `batch` customers per transaction. Returns how many.
 */
export async function fillCustomerKeys(sql: Sql, programId: number, batch = 5000): Promise<number> {
  const keys = visitKeySql('f');
  const set = VISIT_DIMENSIONS.map((d) => `${ATTR_COLUMNS[d]} = ${keys[d]}`).join(', ');
  let total = 0;
  for (;;) {
    const done = await sql`
      update customers c set ${sql.unsafe(set)}
      from (select c2.id, f.* from customers c2
            cross join lateral (
              select e.geo_country, e.device_type, e.browser_name, e.device_os, e.referrer_url, e.page_url
              from click_events e where e.click_id = c2.click_id and e.program_id = c2.program_id and not e.is_test
              order by e.click_timestamp, e.event_id limit 1) f
            where c2.program_id = ${programId} and c2.click_id is not null and c2.attr_country is null
            limit ${batch}) f
      where c.id = f.id`;
    total += done.count;
    if (done.count < batch) return total;
  }
}

/**
 * The day's week in program_weekly_breakdown, written again as the sum of its days in
 * program_daily_breakdown. The caller holds the program_daily_stats rows of all seven days (lockWeek), so
 * no worker writes any day of the week meanwhile: the sum is exact, and a weekly row that was wrong itself
 * is put right too.
 */
async function rebuildWeek(tx: Tx, programId: number, day: string) {
  const monday = tx`${day}::date - extract(isodow from ${day}::date)::int + 1`;
  await tx`delete from program_weekly_breakdown where program_id = ${programId} and week = ${monday}`;
  await tx`
    insert into program_weekly_breakdown (program_id, dimension, week, key, clicks, leads, conversions, sales,
                                          revenue_cents, commission_cents)
    select program_id, dimension, ${monday}, key, sum(clicks), sum(leads), sum(conversions), sum(sales),
           sum(revenue_cents), sum(commission_cents)
    from program_daily_breakdown
    where program_id = ${programId} and day between ${monday} and ${monday} + 6
    group by program_id, dimension, key
    order by dimension, key`;
}

/**
 * Locks the program_daily_stats rows of the seven days of `day`'s week (created, zero, where missing), in
 * day order as every worker locks them: from here to the commit, nobody else writes those days' rollups.
 */
async function lockWeek(tx: Tx, programId: number, day: string) {
  const monday = tx`${day}::date - extract(isodow from ${day}::date)::int + 1`;
  await tx`insert into program_daily_stats (program_id, day)
           select ${programId}, d::date from generate_series(${monday}, ${monday} + 6, interval '1 day') d
           on conflict do nothing`;
  await tx`select 1 from program_daily_stats
           where program_id = ${programId} and day between ${monday} and ${monday} + 6
           order by day for no key update`;
}

/**
 * Rewrites one program's day of program_daily_breakdown from the raw events, and its week's rows of
 * program_weekly_breakdown from the days, in the caller's transaction (operations.ts `rebuildDay`: one per
 * day), which it first makes lock the program_daily_stats rows of the week's days, as every worker does
 * before it writes a day's breakdown: a worker's chunk committed before is in the raw events read here, one
 * committed after adds its own delta. So it is safe while the workers run, as long as the transaction
 * holds nothing but the day (and its run's cursor, recordRunDay). Returns how many rows the day has.
 */
export async function rewriteDay(tx: Tx, programId: number, day: string): Promise<number> {
  await lockWeek(tx, programId, day);
  const rows = capKeys(await rawBreakdown(tx, programId, { first: day, last: day }, 'stored'));
  await tx`delete from program_daily_breakdown where program_id = ${programId} and day = ${day}::date`;
  if (rows.length > 0) {
    const col = <K extends keyof KeyRow>(k: K) => rows.map((r) => r[k]);
    await tx`
      insert into program_daily_breakdown (program_id, dimension, day, key, clicks, leads, conversions, sales,
                                           revenue_cents, commission_cents)
      select ${programId}, * from unnest(${col('dimension')}::text[], ${col('day')}::date[], ${col('key')}::text[],
                                         ${col('clicks')}::bigint[], ${col('leads')}::bigint[],
                                         ${col('conversions')}::bigint[], ${col('sales')}::bigint[],
                                         ${col('revenue_cents')}::bigint[], ${col('commission_cents')}::bigint[])`;
  }
  await rebuildWeek(tx, programId, day);
  return rows.length;
}

/**
 * The days of a program worth rebuilding in the range, oldest first: those with a program_daily_stats row
 * that counts something (every day with an event has one; a rebuild leaves zero rows on the other days of
 * the weeks it locked) or a breakdown row.
 */
export async function programDays(db: Db, programId: number, range: DayRange): Promise<string[]> {
  const where = db`${range.first === null ? db`` : db`and day >= ${range.first}::date`}
                   ${range.last === null ? db`` : db`and day <= ${range.last}::date`}`;
  const rows = await db<{ day: string }[]>`
    select day::text as day from program_daily_stats where program_id = ${programId} ${where}
      and (clicks, leads, conversions, sales, revenue_cents, commission_cents) <> (0, 0, 0, 0, 0, 0)
    union
    select distinct day::text from program_daily_breakdown where program_id = ${programId} ${where}
    order by 1`;
  return rows.map((r) => r.day);
}

/** The programs of a rebuild or check: `only` (those that exist, in id order), or every program. */
export async function programIds(db: Db, only: number[] | null): Promise<number[]> {
  const rows = await db<{ id: string }[]>`
    select id::text from programs ${only === null ? db`` : db`where id = any(${only}::bigint[])`} order by id`;
  return rows.map((r) => Number(r.id));
}

/** A run of `npm run rollups -- --rebuild` over one scope; resumed after its last day done. */
export interface RebuildRun {
  id: number;
  doneProgram: number | null;
  doneDay: string | null;
  /** Days done so far. */
  chunks: number;
  resumed: boolean;
}

/** What a run covers: the programs (null: every program) and the days. */
export interface RebuildScope {
  only: number[] | null;
  range: DayRange;
}

/**
 * The unfinished run of this scope (to resume), or a new one. `restart`: an unfinished run of the scope is
 * closed first, so a new one starts.
 */
export async function openRebuildRun(sql: Sql, scope: RebuildScope, restart: boolean): Promise<RebuildRun> {
  const { only, range } = scope;
  const same = sql`program_ids is not distinct from ${only}::bigint[]
    and first_day is not distinct from ${range.first}::date and last_day is not distinct from ${range.last}::date`;
  if (restart)
    await sql`update rollup_rebuilds set finished_at = now() where finished_at is null and ${same}`;
  const [open] = await sql<
    { id: string; done_program_id: string | null; done_day: string | null; chunks: string }[]
  >`
    select id::text, done_program_id::text, done_day::text, chunks::text from rollup_rebuilds
    where finished_at is null and ${same} order by id desc limit 1`;
  if (open)
    return {
      id: Number(open.id),
      doneProgram: open.done_program_id === null ? null : Number(open.done_program_id),
      doneDay: open.done_day,
      chunks: Number(open.chunks),
      resumed: true,
    };
  const [row] = await sql<{ id: string }[]>`
    insert into rollup_rebuilds (program_ids, first_day, last_day)
    values (${only}::bigint[], ${range.first}::date, ${range.last}::date) returning id::text`;
  return { id: Number(row!.id), doneProgram: null, doneDay: null, chunks: 0, resumed: false };
}

/** Records the day as the run's last one done, in the day's own transaction (operations.ts `rebuildRunDay`). */
export async function recordRunDay(tx: Tx, run: RebuildRun, programId: number, day: string): Promise<void> {
  await tx`update rollup_rebuilds set done_program_id = ${programId}, done_day = ${day}::date, chunks = chunks + 1
           where id = ${run.id}`;
}

export async function finishRebuildRun(sql: Sql, run: RebuildRun): Promise<void> {
  await sql`update rollup_rebuilds set finished_at = now() where id = ${run.id}`;
}
