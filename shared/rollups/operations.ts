// The rollups' units of work: each rebuilt (program, day) is one transaction, opened here, whose boundary is
// what makes a rebuild safe while the workers run (rebuild.ts `rewriteDay` locks the day's week first, as
// they do, and the commit releases it). `npm run rollups -- --rebuild`, the bench's seed and the tests call
// these; the SQL is rebuild.ts's, which takes the transaction.
import type { Sql } from '../db/sql.ts';
import type { DayRange } from './raw.ts';
import { fillCustomerKeys, programDays, recordRunDay, rewriteDay } from './rebuild.ts';
import type { RebuildRun } from './rebuild.ts';

/** Rewrites one program's day of the breakdown (and its week) from the raw events, in a transaction of its own. */
export function rebuildDay(sql: Sql, programId: number, day: string): Promise<number> {
  return sql.begin((tx) => rewriteDay(tx, programId, day));
}

/** rebuildDay as a step of `run`: the day is recorded as done in the day's own transaction. */
export function rebuildRunDay(sql: Sql, run: RebuildRun, programId: number, day: string): Promise<number> {
  return sql.begin(async (tx) => {
    const rows = await rewriteDay(tx, programId, day);
    await recordRunDay(tx, run, programId, day);
    return rows;
  });
}

/** Rebuilds every day of a program in the range (fills its customers' keys first); for tests and seeds. */
export async function rebuildProgram(
  sql: Sql,
  programId: number,
  range: DayRange = { first: null, last: null },
) {
  await fillCustomerKeys(sql, programId);
  for (const day of await programDays(sql, programId, range)) await rebuildDay(sql, programId, day);
}
