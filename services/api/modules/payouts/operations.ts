// The payout writes as one unit each, one transaction: the payout's rules (service.ts), its rows (dal.ts),
// its commissions' transitions (the lifecycle, shared/commissions: join, leave, pay) and what all of it
// caused (ledger entries, webhook events, the partner's notification), written with `recordCaused`. The
// routes call these, and so does the property test, which drives them in-process thousands of times.
import type { Sql } from '../../../../shared/db/sql.ts';
import { beginRetrying } from '../../../../shared/db/transactions.ts';
import * as lifecycle from '../../../../shared/commissions/lifecycle.ts';
import { merge, nothing, recordCaused } from '../../../../shared/commissions/caused.ts';
import type { Caused } from '../../../../shared/commissions/caused.ts';
import { netCents } from '../../../../shared/commissions/states.ts';
import type { CommissionState } from '../../../../shared/commissions/states.ts';
import * as dal from './dal.ts';
import type { PayoutRow, ProgramForPayouts } from './dal.ts';
import { checkCancelable, checkPayable, planPayouts } from './service.ts';
import { payoutView } from '../../../../shared/views/payout.ts';
import type { Payout } from './service.ts';
import { decimalAmount } from './export.ts';

export interface PayoutDeps {
  sql: Sql;
  /** KAFKA_PREFIX: the outbox topics of webhook events and notifications. */
  kafkaPrefix: string;
}

/** The plan of a run, from the commissions a creation (or a preview) read. */
export function planRun(rows: CommissionState[], owed: Map<number, number>, program: ProgramForPayouts) {
  return planPayouts(
    rows.map((r) => ({
      id: r.id,
      partner_id: r.partner_id,
      partner_program_id: r.partner_program_id,
      net_cents: netCents(r),
      currency: r.currency,
    })),
    owed,
    Number(program.min_payout_cents),
  );
}

const ppIdsOf = (rows: CommissionState[]) => [...new Set(rows.map((r) => r.partner_program_id))];

/** What a creation would make now (the preview), read without locks. */
export async function previewRun(sql: Sql, program: ProgramForPayouts, partnerIds: number[] | null) {
  const rows = await lifecycle.payable(sql, Number(program.id), partnerIds, false);
  const owed = await lifecycle.clawbacksOwed(sql, Number(program.id), ppIdsOf(rows));
  return planRun(rows, owed, program);
}

/**
 * Creates the program's payouts (`partnerIds`: only theirs) in one transaction: the program locked, its
 * payable commissions locked, the plan made from them, the payouts written, the commissions joined to them,
 * and a `payout.created` event each. Undefined when the program is gone.
 */
export function createProgramPayouts(
  deps: PayoutDeps,
  programId: number,
  partnerIds: number[] | null,
): Promise<PayoutRow[] | undefined> {
  return beginRetrying(deps.sql, async (tx) => {
    const program = await dal.lockProgram(tx, programId);
    if (!program) return undefined;
    const rows = await lifecycle.payable(tx, programId, partnerIds, true);
    const owed = await lifecycle.clawbacksOwed(tx, programId, ppIdsOf(rows));
    const planned = planRun(rows, owed, program).payouts;
    if (planned.length === 0) return [];
    const payoutOf = await dal.insertPayouts(tx, programId, planned);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const joined = await lifecycle.joinPayout(
      tx,
      planned.flatMap((p) =>
        p.commission_ids.map((id) => ({
          payoutId: payoutOf.get(p.partner_program_id)!,
          commission: byId.get(id)!,
        })),
      ),
    );
    const created = await dal.payoutsByIds(tx, [...payoutOf.values()]);
    const events: Caused = {
      ...nothing(),
      events: created.map((r) => ({
        type: 'payout.created' as const,
        workspace_id: Number(program.workspace_id),
        program_id: programId,
        data: payoutView(r),
      })),
    };
    await recordCaused(tx, { kafkaPrefix: deps.kafkaPrefix }, merge(events, joined.caused));
    return created;
  });
}

/** The partner's notification of a paid payout (mailed). */
function paidNotice(payout: Payout, programName: string, commissions: number): Caused {
  const sent = `${decimalAmount(payout.amount_cents)} ${payout.currency}`;
  const recovered =
    payout.recovered_cents > 0
      ? ` (${decimalAmount(payout.recovered_cents)} ${payout.currency} of earlier refunds was deducted)`
      : '';
  return {
    ...nothing(),
    notifications: [
      {
        notification_key: `payout:${payout.id}:paid:partner`,
        recipient_type: 'partner',
        partner_id: payout.partner_id,
        workspace_id: null,
        program_id: payout.program_id,
        kind: 'payout_paid',
        title: 'A payout was sent',
        body:
          `${programName} sent you ${sent} for ${commissions} commission${commissions === 1 ? '' : 's'}${recovered}.` +
          (payout.reference ? ` Reference: ${payout.reference}` : ''),
        data: {
          payout_id: payout.id,
          amount_cents: payout.amount_cents,
          currency: payout.currency,
          reference: payout.reference,
        },
        mail: true,
      },
    ],
  };
}

/**
 * Marks the payout paid in one transaction: the program and the payout locked, the status checked, its
 * commissions paid (lifecycle `payInPayout`: their status, the ledger entries of what was counted and of
 * what was recovered), the payout `paid` with its reference and the method it was paid with, the partner's
 * notification and mail, `payout.paid` and a `commission.updated` per commission. Undefined when the payout
 * is gone.
 */
export function payPayout(
  deps: PayoutDeps,
  payoutId: number,
  reference: string | null | undefined,
): Promise<PayoutRow | undefined> {
  return beginRetrying(deps.sql, async (tx) => {
    const locked = await dal.lockPayout(tx, payoutId);
    if (!locked) return undefined;
    checkPayable(locked.status);
    const before = (await dal.findPayout(tx, payoutId))!;
    const paidCommissions = await lifecycle.payInPayout(tx, {
      id: payoutId,
      partner_id: Number(before.partner_id),
      partner_program_id: Number(before.partner_program_id),
      recovered_cents: Number(before.recovered_cents),
    });
    await dal.setPayoutPaid(tx, payoutId, reference?.trim() || null);
    const paid = (await dal.findPayout(tx, payoutId))!;
    const payout = payoutView(paid);
    const program = (await dal.programOfPayoutRow(tx, payout.program_id))!;
    const own: Caused = {
      ...paidNotice(payout, program.name, paidCommissions.rows.length),
      events: [
        {
          type: 'payout.paid',
          workspace_id: Number(program.workspace_id),
          program_id: payout.program_id,
          data: payout,
        },
      ],
    };
    await recordCaused(tx, { kafkaPrefix: deps.kafkaPrefix }, merge(own, paidCommissions.caused));
    return paid;
  });
}

/**
 * Cancels a pending payout in one transaction: its commissions leave it (lifecycle `leavePayout`: payable
 * again by the next creation, its rows no longer live), the payout `canceled`. Undefined when it is gone.
 */
export function cancelPayout(deps: PayoutDeps, payoutId: number): Promise<PayoutRow | undefined> {
  return beginRetrying(deps.sql, async (tx) => {
    const locked = await dal.lockPayout(tx, payoutId);
    if (!locked) return undefined;
    checkCancelable(locked.status);
    const left = await lifecycle.leavePayout(tx, payoutId);
    await dal.setPayoutCanceled(tx, payoutId);
    await recordCaused(tx, { kafkaPrefix: deps.kafkaPrefix }, left.caused);
    return dal.findPayout(tx, payoutId);
  });
}
