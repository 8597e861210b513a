// The commissions API's writes, each one transaction: a transition of the lifecycle (shared/commissions:
// the rules, the write, what it causes) and what it caused (the ledger entry, `commission.updated`, the
// partner's notification), written with the change. A refused transition is the 409 with the rule's reason.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { beginRetrying } from '../../../../shared/db/transactions.ts';
import * as lifecycle from '../../../../shared/commissions/lifecycle.ts';
import type { Outcome } from '../../../../shared/commissions/lifecycle.ts';
import { recordCaused } from '../../../../shared/commissions/caused.ts';
import type { CommissionRecord } from '../../../../shared/commissions/dal.ts';
import { HttpError } from '../../../../shared/http/server.ts';

export interface CommissionDeps {
  sql: Sql;
  /** KAFKA_PREFIX: the outbox topics of the events and notifications. */
  kafkaPrefix: string;
}

/** The transition in a transaction of its own; undefined when the commission is gone. */
function transition(
  deps: CommissionDeps,
  run: (tx: Tx) => Promise<Outcome | undefined>,
): Promise<CommissionRecord | undefined> {
  return beginRetrying(deps.sql, async (tx) => {
    const outcome = await run(tx);
    if (!outcome) return undefined;
    if ('refused' in outcome) throw new HttpError(409, outcome.refused);
    await recordCaused(tx, { kafkaPrefix: deps.kafkaPrefix }, outcome.caused);
    return outcome.row;
  });
}

/** Status paid, paid_at and the entry `commission:<id>:paid` (-amount, never clamped), `commission.updated`. */
export const markCommissionPaid = (deps: CommissionDeps, commissionId: number) =>
  transition(deps, (tx) => lifecycle.payAlone(tx, commissionId));

/** Clears the review hold (approved at once when due), `commission.updated`. */
export const approveCommission = (deps: CommissionDeps, commissionId: number) =>
  transition(deps, (tx) => lifecycle.approve(tx, commissionId));

/** Reversed as a full refund would reverse it: deduction, the partner's notification, `commission.updated`. */
export const rejectCommission = (
  deps: CommissionDeps,
  commissionId: number,
  reason: string | null | undefined,
) => transition(deps, (tx) => lifecycle.reject(tx, commissionId, reason));
