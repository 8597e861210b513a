// The commission's life as a state machine, pure (docs/architecture.md "Commission lifecycle"; CONTRACT
// "Commission transitions" and part two "Holding, reviewing and paying out"). Each transition is one
// function from the state it starts from to a Decision: refused (with the reason the API answers 409 with,
// or the refund answers `skipped` with), or the columns it writes and what it causes (ledger entries,
// notifications, whether it announces `commission.updated`). lifecycle.ts reads the state under the row
// lock, calls these, and writes what they decide; nothing else writes a commission's state.
//
//   (sale) ─create─► pending ──becomePayable (payable_at, not held)──► approved ──joinPayout──► in a payout
//                     │  held (holdForReview): stays pending past payable_at until approve or reject  │
//                     ├─approve─► (approved once due)          leavePayout (cancel) ◄─────────────────┤
//                     ├─reject──► reversed (deduction)                         payInPayout ─► paid ◄──┘
//                     └─payAlone─► paid (not held, in no payout)
//   pending | approved ─deductRefund─► refunded (partial) | reversed (full), clamped deduction
//   paid ───────────────clawback────► refunded | reversed, deduction in full: owed until a payout recovers it
//   (another service) ─createImported─► pending | approved | paid (in no payout) | reversed: history as it was
import type { LedgerEffect } from '../contracts/commands.ts';
import { commissionEntryKey } from '../ledger/rules.ts';
import type { NotificationInput } from '../db/notifications.ts';
import { refundDeduction } from '../domain/refund.ts';
import { COMMISSION_STATUSES, REVIEW_REASONS } from '../domain/statuses.ts';
import type { CommissionStatus } from '../domain/statuses.ts';
import type { ReviewReason } from '../domain/statuses.ts';

export { REVIEW_REASONS };
export type { ReviewReason };

export { COMMISSION_STATUSES };
export type { CommissionStatus };

/** A commission as a transition reads it (under its row lock). */
export interface CommissionState {
  id: number;
  status: CommissionStatus;
  amount_cents: number;
  deducted_cents: number;
  currency: string;
  partner_id: number;
  partner_program_id: number;
  program_id: number;
  workspace_id: number | null;
  /** Null for a bonus, which has no sale. */
  transaction_id: string | null;
  review_reason: ReviewReason | null;
  payout_id: number | null;
  paid_at: Date | null;
  /** payable_at (or, for rows from before holds, created_at) has passed, by the database's clock. */
  due: boolean;
}

/** `now` stands for the transaction's time (Postgres's now()); a Date is written as it is (seeded data). */
export type At = 'now' | Date;

/** The columns a transition writes; the others keep their values. */
export interface CommissionWrite {
  status?: CommissionStatus;
  review_reason?: ReviewReason | null;
  payout_id?: number | null;
  paid_at?: At | null;
  deducted_cents?: number;
  refund_reason?: string | null;
}

export type Decision =
  | { refused: string }
  | {
      write: CommissionWrite;
      ledger: LedgerEffect[];
      notifications: NotificationInput[];
      /** Whether the change is announced with `commission.updated` (status changes and holds). */
      announce: boolean;
    };

const done = (
  write: CommissionWrite,
  more: { ledger?: LedgerEffect[]; notifications?: NotificationInput[]; announce?: boolean } = {},
): Decision => ({
  write,
  ledger: more.ledger ?? [],
  notifications: more.notifications ?? [],
  announce: more.announce ?? true,
});

export const REFUSED = {
  alreadyPaid: 'Commission is already paid',
  cannotPay: (status: CommissionStatus) => `A ${status} commission cannot be marked paid`,
  held: 'Commission is held for review: approve or reject it first',
  notHeld: 'Commission is not held for review',
  reversedCannotApprove: 'A reversed commission cannot be approved',
  alreadyReversed: 'Commission is already reversed',
  cannotReject: (status: 'paid' | 'refunded') => `A ${status} commission cannot be rejected`,
  inPayout: (payoutId: string | number) =>
    `Commission is in pending payout ${payoutId}: mark the payout paid or cancel it`,
  /** A refund of a commission that already had one: the refund is `skipped`. */
  alreadyRefunded: (status: 'reversed' | 'refunded') => `Commission already ${status}`,
  notPending: 'Commission is not pending',
  alreadyHeld: 'Commission is already held for review',
  notDue: 'Commission is not due yet',
  notPayable: 'Commission cannot be paid out',
  notInPayout: (payoutId: number) => `Commission is not in payout ${payoutId}`,
} as const;

const DAY_MS = 86_400_000;

/** The sale's time plus the program's hold (ISO): when the sweep may approve the commission. */
export function payableAt(saleTs: number, holdDays: number): string {
  return new Date(saleTs + holdDays * DAY_MS).toISOString();
}

const dollars = (cents: number) => (cents / 100).toFixed(2);

// ---- the ledger entries of the transitions ----

function entry(
  c: Pick<CommissionState, 'id' | 'partner_id' | 'partner_program_id'>,
  step: 'created' | 'paid' | 'refund',
  kind: LedgerEffect['kind'],
  amount: number,
  clamp: boolean,
  payoutId?: number,
): LedgerEffect {
  return {
    topic: 'ledger',
    entry_key: commissionEntryKey(c.id, step),
    kind,
    partner_id: c.partner_id,
    partner_program_id: c.partner_program_id,
    commission_id: c.id,
    ...(payoutId === undefined ? {} : { payout_id: payoutId }),
    amount_cents: amount,
    clamp_at_zero: clamp,
  };
}

/** The credit of a new commission: its amount, `commission:<id>:created`. */
export const creditEntry = (
  c: Pick<CommissionState, 'id' | 'partner_id' | 'partner_program_id'>,
  amount: number,
) => entry(c, 'created', 'commission_created', amount, true);

/**
 * A payment's entry, keyed by the commission so it can never apply twice: what was paid for it (its amount
 * when paid alone, what the payout counted in a payout), never clamped.
 */
export const paidEntry = (
  c: Pick<CommissionState, 'id' | 'partner_id' | 'partner_program_id'>,
  paidCents: number,
  payoutId?: number,
) => entry(c, 'paid', 'commission_paid', -paidCents, false, payoutId);

/**
 * The commission's one deduction, `commission:<id>:refund`: a refund's or a rejection's. Clamped (it takes at
 * most what the commission's own entries hold) unless the commission was paid: a clawback is taken in full.
 */
export const deductionEntry = (
  c: Pick<CommissionState, 'id' | 'partner_id' | 'partner_program_id'>,
  cents: number,
  full: boolean,
  wasPaid: boolean,
) => entry(c, 'refund', full ? 'commission_reversed' : 'commission_refunded', -cents, !wasPaid);

/**
 * A payout's recovery of earlier clawbacks (`payout:<id>:recovered`, +recovered_cents, no commission): the
 * payment's entries then add up to -amount_cents, the money sent.
 */
export function recoveryEntry(p: {
  payout_id: number;
  partner_id: number;
  partner_program_id: number;
  recovered_cents: number;
}): LedgerEffect[] {
  if (p.recovered_cents <= 0) return [];
  return [
    {
      topic: 'ledger',
      entry_key: `payout:${p.payout_id}:recovered`,
      kind: 'clawback_recovered',
      partner_id: p.partner_id,
      partner_program_id: p.partner_program_id,
      commission_id: null,
      payout_id: p.payout_id,
      amount_cents: p.recovered_cents,
      clamp_at_zero: false,
    },
  ];
}

// ---- the transitions ----

/** A new commission's row (status pending, payable at the sale's time + hold) and its credit. */
export function create(input: { saleTs: number; holdDays: number }): {
  status: 'pending';
  payable_at: string;
} {
  return { status: 'pending', payable_at: payableAt(input.saleTs, input.holdDays) };
}

/**
 * A hold for review, decided in the transaction that creates the commission (the rules: review-reasons.ts);
 * its `commission.created` carries the reason. Only a fresh commission: pending, unpaid, in no payout.
 */
export function holdForReview(
  c: Pick<CommissionState, 'status' | 'paid_at' | 'payout_id' | 'review_reason'>,
  reason: ReviewReason,
): Decision {
  if (c.status !== 'pending' || c.paid_at !== null || c.payout_id !== null)
    return { refused: REFUSED.notPending };
  if (c.review_reason !== null) return { refused: REFUSED.alreadyHeld };
  return done({ review_reason: reason }, { announce: false });
}

/**
 * Approve clears a review hold of an unpaid commission: one already due becomes `approved` at once, one still
 * in its hold stays `pending` for the sweep, a partly refunded one keeps `refunded` (its remainder payable).
 */
export function approve(c: CommissionState): Decision {
  if (c.status === 'reversed') return { refused: REFUSED.reversedCannotApprove };
  if (c.review_reason === null || c.paid_at !== null) return { refused: REFUSED.notHeld };
  return done({
    review_reason: null,
    ...(c.status === 'pending' && c.due ? { status: 'approved' as const } : {}),
  });
}

/** The refund_reason of a rejection. */
export const rejectionReason = (reason: string | null | undefined): string => {
  const r = reason?.trim();
  return r ? `rejected: ${r}` : 'rejected';
};

/**
 * Reject reverses an unpaid commission without deductions that is in no payout, held or not, as a full
 * refund would: status reversed, the whole amount deducted (its refund entry: a later refund is skipped),
 * the partner told in-app.
 */
export function reject(c: CommissionState, reason: string | null | undefined): Decision {
  if (c.status === 'reversed') return { refused: REFUSED.alreadyReversed };
  if (c.status === 'paid' || c.status === 'refunded') return { refused: REFUSED.cannotReject(c.status) };
  if (c.payout_id !== null) return { refused: REFUSED.inPayout(c.payout_id) };
  const refundReason = rejectionReason(reason);
  return done(
    { status: 'reversed', deducted_cents: c.amount_cents, refund_reason: refundReason },
    {
      ledger: [deductionEntry(c, c.amount_cents, true, false)],
      notifications: [
        {
          notification_key: `commission:${c.id}:rejected:partner`,
          recipient_type: 'partner',
          partner_id: c.partner_id,
          workspace_id: null,
          program_id: c.program_id,
          kind: 'commission_rejected',
          title: 'A commission was rejected',
          body: `Your commission of ${dollars(c.amount_cents)} ${c.currency} ${c.transaction_id === null ? 'for a bonus' : `on sale ${c.transaction_id}`} was rejected after review. Reason: ${refundReason.replace(/^rejected(: )?/, '') || 'No reason given'}`,
          data: { commission_id: c.id, transaction_id: c.transaction_id, refund_reason: refundReason },
        },
      ],
    },
  );
}

/** The approval sweep's step: a pending commission that is due and not held becomes `approved`. */
export function becomePayable(c: CommissionState): Decision {
  if (c.status !== 'pending' || c.paid_at !== null) return { refused: REFUSED.notPending };
  if (c.review_reason !== null) return { refused: REFUSED.held };
  if (!c.due) return { refused: REFUSED.notDue };
  return done({ status: 'approved' });
}

/**
 * A commission may be marked paid on its own when it is pending or approved, in no payout (a payout pays its
 * commissions together: one paid alone would be paid twice) and not held for review.
 */
export function payAlone(c: CommissionState, at: At = 'now'): Decision {
  if (c.status === 'paid') return { refused: REFUSED.alreadyPaid };
  if (c.status !== 'pending' && c.status !== 'approved') return { refused: REFUSED.cannotPay(c.status) };
  if (c.payout_id !== null) return { refused: REFUSED.inPayout(c.payout_id) };
  if (c.review_reason !== null) return { refused: REFUSED.held };
  return done({ status: 'paid', paid_at: at }, { ledger: [paidEntry(c, c.amount_cents)] });
}

/** What a payout counts for a commission that joins it: its amount less its deductions. */
export const netCents = (c: Pick<CommissionState, 'amount_cents' | 'deducted_cents'>) =>
  c.amount_cents - c.deducted_cents;

/**
 * A commission joins a payout when it is payable: unpaid, in no payout, not held, its partner approved in
 * the program, and approved (or partly refunded with something left, once due). Not announced: its status
 * does not change (the payout's `payout.created` says which commissions it holds).
 */
export function joinPayout(c: CommissionState, payoutId: number, partnerApproved: boolean): Decision {
  const payable = c.status === 'approved' || (c.status === 'refunded' && netCents(c) > 0 && c.due);
  if (
    !payable ||
    c.paid_at !== null ||
    c.payout_id !== null ||
    c.review_reason !== null ||
    !partnerApproved
  ) {
    return { refused: REFUSED.notPayable };
  }
  return done({ payout_id: payoutId }, { announce: false });
}

/** A canceled payout's commissions leave it, payable again by the next one. Not announced (no status change). */
export function leavePayout(c: CommissionState, payoutId: number): Decision {
  if (c.payout_id !== payoutId || c.paid_at !== null) return { refused: REFUSED.notInPayout(payoutId) };
  return done({ payout_id: null }, { announce: false });
}

/**
 * A payout marked paid pays its commissions: `paid` with paid_at (one refunded while the payout was pending
 * keeps its status: what the payout counted for it is then a clawback), and the entry of what was counted.
 */
export function payInPayout(c: CommissionState, payoutId: number, countedCents: number): Decision {
  if (c.payout_id !== payoutId || c.paid_at !== null) return { refused: REFUSED.notInPayout(payoutId) };
  return done(
    {
      ...(c.status === 'pending' || c.status === 'approved' ? { status: 'paid' as const } : {}),
      paid_at: 'now',
    },
    { ledger: [paidEntry(c, countedCents, payoutId)] },
  );
}

export interface Refund {
  sale_cents: number;
  /** null: a full refund. */
  refund_cents: number | null;
  reason: string | null;
}

/**
 * A refund's deduction (CONTRACT "Refund"): proportional to the refunded share of the sale; full → reversed,
 * partial → refunded. A commission that already had one is skipped. Paid: a clawback.
 */
export function refund(c: CommissionState, r: Refund): Decision {
  return c.status === 'paid' ? clawback(c, r) : deductRefund(c, r);
}

/** The refund of an unpaid commission: its deduction is clamped to what its own entries still hold. */
export function deductRefund(c: CommissionState, r: Refund): Decision {
  if (c.status === 'reversed' || c.status === 'refunded')
    return { refused: REFUSED.alreadyRefunded(c.status) };
  if (c.status === 'paid') return { refused: REFUSED.alreadyPaid };
  return refundDecision(c, r, false);
}

/**
 * The refund of a paid commission: deducted in full (the balance may go below zero), owed by the partner
 * until later payouts recover it, and the advertiser is told (manual review).
 */
export function clawback(c: CommissionState, r: Refund): Decision {
  if (c.status === 'reversed' || c.status === 'refunded')
    return { refused: REFUSED.alreadyRefunded(c.status) };
  if (c.status !== 'paid') return { refused: REFUSED.notPayable };
  return refundDecision(c, r, true);
}

function refundDecision(c: CommissionState, r: Refund, wasPaid: boolean): Decision {
  const { deduction, full } = refundDeduction(c.amount_cents, r.sale_cents, r.refund_cents);
  const reason = r.reason ?? 'No reason given';
  const notifications: NotificationInput[] = [
    {
      notification_key: `commission:${c.id}:refund:partner`,
      recipient_type: 'partner',
      partner_id: c.partner_id,
      workspace_id: null,
      program_id: c.program_id,
      kind: full ? 'commission_reversed' : 'commission_refunded',
      title: full ? 'A commission was reversed' : 'A commission was partly refunded',
      body: `A refund on sale ${c.transaction_id} deducted ${dollars(deduction)} ${c.currency} from your commission. Reason: ${reason}`,
      data: {
        commission_id: c.id,
        transaction_id: c.transaction_id,
        deduction_cents: deduction,
        refund_reason: r.reason,
      },
      // CONTRACT "Mail": the refund notification is mailed to the partner too.
      mail: true,
    },
  ];
  if (wasPaid) {
    notifications.push({
      notification_key: `commission:${c.id}:refund:advertiser`,
      recipient_type: 'advertiser',
      partner_id: c.partner_id,
      workspace_id: c.workspace_id,
      program_id: c.program_id,
      kind: 'paid_commission_refunded',
      title: 'Manual review: a paid commission was refunded',
      body: `Commission ${c.id} had already been paid when sale ${c.transaction_id} was refunded; ${dollars(deduction)} ${c.currency} is now owed by the partner. Reason: ${reason}`,
      data: { commission_id: c.id, transaction_id: c.transaction_id, deduction_cents: deduction },
    });
  }
  return done(
    { status: full ? 'reversed' : 'refunded', deducted_cents: deduction, refund_reason: r.reason },
    { ledger: [deductionEntry(c, deduction, full, wasPaid)], notifications },
  );
}

/** The state an imported commission was in at its source (docs/importing.md "Mapping"). */
export const IMPORTED_STATES = ['pending', 'approved', 'paid', 'rejected'] as const;
export type ImportedState = (typeof IMPORTED_STATES)[number];

/** The refund_reason of a commission rejected (voided, canceled) at the service it was imported from. */
export const importedRejection = (source: string) => `rejected: ${source}`;

/**
 * A commission imported from another service arrives in the state it had there, with the ledger entries
 * that state means here: its credit; a paid one's payment (paid at the source's time, in no payout: a
 * payout run never takes it, since it is paid); a rejected one's full deduction (reversed). Nothing is
 * announced and nobody is notified: it is history (docs/importing.md "Events and mail"). A pending one
 * stays pending until payable_at (the source's due date), then the sweep approves it like any other.
 */
export function createImported(
  c: Pick<CommissionState, 'id' | 'partner_id' | 'partner_program_id' | 'amount_cents'>,
  state: ImportedState,
  source: { name: string; paidAt: Date | null },
): Extract<Decision, { write: CommissionWrite }> {
  const credit = creditEntry(c, c.amount_cents);
  const quiet = { announce: false };
  const decided = (write: CommissionWrite, ledger: LedgerEffect[]) =>
    done(write, { ...quiet, ledger }) as Extract<Decision, { write: CommissionWrite }>;
  switch (state) {
    case 'pending':
      return decided({}, [credit]);
    case 'approved':
      return decided({ status: 'approved' }, [credit]);
    case 'paid':
      return decided({ status: 'paid', paid_at: source.paidAt ?? 'now' }, [
        credit,
        paidEntry(c, c.amount_cents),
      ]);
    case 'rejected':
      return decided(
        { status: 'reversed', deducted_cents: c.amount_cents, refund_reason: importedRejection(source.name) },
        [credit, deductionEntry(c, c.amount_cents, true, false)],
      );
  }
}

/** Every transition of one commission, by name: the list docs/architecture.md and the unit test walk. */
export const TRANSITIONS = {
  holdForReview,
  approve,
  reject,
  becomePayable,
  payAlone,
  joinPayout,
  leavePayout,
  payInPayout,
  deductRefund,
  clawback,
} as const;
