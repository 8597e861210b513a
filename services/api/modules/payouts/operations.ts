// The payout writes as one unit each: the rules (service.ts), the SQL (dal.ts) and what the change tells
// others (webhook events, the partner's notification and mail), in the transaction of the change. The
// routes call these, and so does the property test, which drives them in-process thousands of times.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { notify } from '../../../../shared/db/notifications.ts';
import { recordWebhookEvents } from '../../../../shared/db/webhook-events.ts';
import { recordCommissionUpdates } from '../../../../shared/db/commission-events.ts';
import * as dal from './dal.ts';
import type { CandidateRow, PayoutRow, ProgramForPayouts } from './dal.ts';
import { checkCancelable, checkPayable, paymentEntries, planPayouts, toPayout } from './service.ts';
import type { Payout } from './service.ts';
import { decimalAmount } from './export.ts';

export interface PayoutDeps {
  sql: Sql;
  /** KAFKA_PREFIX: the outbox topics of webhook events and mail. */
  kafkaPrefix: string;
  /** PUBLIC_URL: the link in the partner's mail. */
  publicUrl: string;
}

const eventData = (p: Payout, updatedAt: string) => ({ ...p, updated_at: updatedAt });

/** The plan of a run, from the rows a creation (or a preview) read. */
export function planRun(rows: CandidateRow[], owed: Map<number, number>, program: ProgramForPayouts) {
  return planPayouts(
    rows.map((r) => ({
      id: Number(r.id),
      partner_id: Number(r.partner_id),
      partner_program_id: Number(r.partner_program_id),
      net_cents: Number(r.net_cents),
      currency: r.currency,
    })),
    owed,
    Number(program.min_payout_cents),
  );
}

/** Creates the program's payouts (`partnerIds`: only theirs) with a `payout.created` event each. */
export function createProgramPayouts(
  deps: PayoutDeps,
  programId: number,
  partnerIds: number[] | null,
): Promise<PayoutRow[] | undefined> {
  return dal.createPayouts(
    deps.sql,
    programId,
    partnerIds,
    (rows, owed, program) => planRun(rows, owed, program).payouts,
    async (tx: Tx, rows: PayoutRow[], program) => {
      const now = new Date().toISOString();
      await recordWebhookEvents(
        tx,
        deps.kafkaPrefix,
        rows.map((r) => ({
          type: 'payout.created' as const,
          workspace_id: Number(program.workspace_id),
          program_id: programId,
          data: eventData(toPayout(r), now),
        })),
      );
    },
  );
}

/**
 * Marks the payout paid: commissions, ledger entries, the payout, the partner's notification and mail, and
 * the `payout.paid` and `commission.updated` events, in one transaction (dal.markPayoutPaid).
 */
export function payPayout(
  deps: PayoutDeps,
  payoutId: number,
  reference: string | null | undefined,
): Promise<PayoutRow | undefined> {
  return dal.markPayoutPaid(deps.sql, payoutId, {
    check: checkPayable,
    reference: reference?.trim() || null,
    entries: (p, commissions) =>
      paymentEntries({
        payout_id: Number(p.id),
        partner_id: Number(p.partner_id),
        partner_program_id: Number(p.partner_program_id),
        recovered_cents: Number(p.recovered_cents),
        commissions: commissions.map((c) => ({ id: Number(c.id), counted_cents: Number(c.counted_cents) })),
      }),
    after: async (tx, paid, commissions) => {
      const payout = toPayout(paid);
      const [program] = await tx<{ workspace_id: string; name: string }[]>`
        select workspace_id, name from programs where id = ${payout.program_id}`;
      const sent = `${decimalAmount(payout.amount_cents)} ${payout.currency}`;
      const recovered =
        payout.recovered_cents > 0
          ? ` (${decimalAmount(payout.recovered_cents)} ${payout.currency} of earlier refunds was deducted)`
          : '';
      const n = commissions.length;
      await notify(tx, { kafkaPrefix: deps.kafkaPrefix, publicUrl: deps.publicUrl }, [
        {
          notification_key: `payout:${payout.id}:paid:partner`,
          recipient_type: 'partner',
          partner_id: payout.partner_id,
          workspace_id: null,
          program_id: payout.program_id,
          kind: 'payout_paid',
          title: 'A payout was sent',
          body:
            `${program!.name} sent you ${sent} for ${n} commission${n === 1 ? '' : 's'}${recovered}.` +
            (payout.reference ? ` Reference: ${payout.reference}` : ''),
          data: {
            payout_id: payout.id,
            amount_cents: payout.amount_cents,
            currency: payout.currency,
            reference: payout.reference,
          },
          mail: true,
        },
      ]);
      await recordWebhookEvents(tx, deps.kafkaPrefix, [
        {
          type: 'payout.paid',
          workspace_id: Number(program!.workspace_id),
          program_id: payout.program_id,
          data: eventData(payout, payout.paid_at!),
        },
      ]);
      await recordCommissionUpdates(
        tx,
        deps.kafkaPrefix,
        commissions.map((c) => Number(c.id)),
      );
    },
  });
}

/** Cancels a pending payout: its commissions are payable again. */
export function cancelPayout(deps: PayoutDeps, payoutId: number): Promise<PayoutRow | undefined> {
  return dal.cancelPayout(deps.sql, payoutId, checkCancelable);
}
