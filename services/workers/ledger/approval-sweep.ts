// The approval sweep (CONTRACT part two: a commission is `pending` until payable_at, then `approved` within
// a minute unless held for review). A periodic task of the ledger worker (docs/payouts.md "The sweep"):
//
// - one runner at a time, however many ledger workers run: each round is a transaction that first takes
//   `pg_try_advisory_xact_lock`; a replica that does not get it skips the round. The lock is released with
//   the transaction (or the connection, if its process dies), so no lease can outlive a crashed runner and
//   a restart or another replica carries on at its next round;
// - bounded: at most `batchSize` commissions per round, oldest payable_at first; a full round runs again
//   at once;
// - idempotent: the lifecycle's `becomePayable` (shared/commissions) reads `pending`, not held and due on
//   the rows it locks (`for no key update skip locked`: a commission a refund holds right now is taken next
//   round) and decides each with the lifecycle's rule, and the `commission.updated` event of each approval
//   is written in the same transaction. A round killed mid-way commits nothing; one that committed never
//   approves the same commission again.
import type { Sql } from '../../../shared/db/sql.ts';
import * as lifecycle from '../../../shared/commissions/lifecycle.ts';
import { recordCaused } from '../../../shared/commissions/caused.ts';

/** The advisory lock key of the sweep (the migrations use 727_274_001). */
export const APPROVAL_SWEEP_LOCK = 727_274_017;

export interface SweepRound {
  approved: number;
  /** True when the round was full: more commissions may be due. */
  more: boolean;
  /** True when another process held the lock, so this one did nothing. */
  busy: boolean;
}

export function createApprovalSweep(deps: { sql: Sql; kafkaPrefix: string; batchSize: number }) {
  const { sql, kafkaPrefix, batchSize } = deps;
  return async function sweep(): Promise<SweepRound> {
    return sql.begin(async (tx) => {
      const [lock] = await tx<
        { got: boolean }[]
      >`select pg_try_advisory_xact_lock(${APPROVAL_SWEEP_LOCK}) as got`;
      if (!lock!.got) return { approved: 0, more: false, busy: true };
      const { rows, caused } = await lifecycle.becomePayable(tx, batchSize);
      await recordCaused(tx, { kafkaPrefix }, caused);
      return { approved: rows.length, more: rows.length === batchSize, busy: false };
    });
  };
}
