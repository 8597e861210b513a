// The commission lifecycle: every transition of a commission, one function each, for the web process and
// every worker (docs/architecture.md "Commission lifecycle"). Each runs in the caller's transaction
// (opened by a module's service or operations file, or a worker's step), reads the commission under its row
// lock, lets the rules decide (states.ts: the state it starts from, what it writes, what it causes), writes
// the change (dal.ts, the only writer of a commission's state) and returns what it caused, which the caller
// writes with `recordCaused` (caused.ts). Nothing else inserts commissions or writes their state.
//
//   create (+ holdForReview)   attribution worker: a chunk of sales          → credits, commission.created
//   awardBonuses (= create)    a chunk of sales, a new bonus (bonuses API)    → credits, commission.created
//   approve, reject, payAlone  commissions API (operations.ts)               → reject/pay: ledger; updated
//   becomePayable              ledger worker's approval sweep                 → commission.updated
//   joinPayout, leavePayout    payouts API: create, cancel                    → nothing announced
//   payInPayout                payouts API: mark paid                         → payments + recovery; updated
//   refund (deductRefund | clawback)   reversal worker, processor events    → deduction, notifications, updated
//   createImported             import worker: a page of another service's commissions → their entries only
import type { Tx } from '../db/sql.ts';
import * as dal from './dal.ts';
import type { CommissionRecord, NewCommissionRow } from './dal.ts';
import * as rules from './states.ts';
import type { At, CommissionState, Decision, ImportedState, Refund } from './states.ts';
import { reviewReasons } from './review-reasons.ts';
import type { ReviewReason } from './review-reasons.ts';
import { commissionEvent } from './caused.ts';
import type { Caused } from './caused.ts';

/** A single commission's transition: refused (with the rule's reason) or done (its row after, what it caused). */
export type Outcome = { refused: string; state: CommissionState } | { row: CommissionRecord; caused: Caused };

/** A transition that cannot be refused here (the read's condition is its rule): a refusal is a bug. */
export class TransitionInvariantError extends Error {
  constructor(transition: string, commissionId: number, reason: string) {
    super(`${transition} of commission ${commissionId}: ${reason}`);
    this.name = 'TransitionInvariantError';
  }
}

const causedOf = (d: Exclude<Decision, { refused: string }>, row: CommissionRecord): Caused => ({
  ledger: d.ledger,
  notifications: d.notifications,
  events: d.announce ? commissionEvent('commission.updated', row) : [],
});

async function decideOne(
  tx: Tx,
  c: CommissionState | undefined,
  decide: (c: CommissionState) => Decision,
  at?: At,
): Promise<Outcome | undefined> {
  if (!c) return undefined;
  const d = decide(c);
  if ('refused' in d) return { refused: d.refused, state: c };
  const [row] = await dal.writeCommissions(tx, [{ id: c.id, write: d.write }], at);
  return { row: row!, caused: causedOf(d, row!) };
}

/** Decides every locked commission with `decide` (none may be refused) and writes them with one statement. */
async function decideAll(
  tx: Tx,
  name: string,
  cs: CommissionState[],
  decide: (c: CommissionState) => Decision,
  at?: At,
): Promise<{ rows: CommissionRecord[]; caused: Caused }> {
  const decided = cs.map((c) => {
    const d = decide(c);
    if ('refused' in d) throw new TransitionInvariantError(name, c.id, d.refused);
    return d;
  });
  const rows = await dal.writeCommissions(
    tx,
    cs.map((c, i) => ({ id: c.id, write: decided[i]!.write })),
    at,
  );
  const each = rows.map((row, i) => causedOf(decided[i]!, row));
  return {
    rows,
    caused: {
      ledger: each.flatMap((c) => c.ledger),
      events: each.flatMap((c) => c.events),
      notifications: each.flatMap((c) => c.notifications),
    },
  };
}

// ---- creation ----

/**
 * A commission a sale earned, as the attribution worker (or a seeder) creates it: the row but for
 * payable_at, which `create` computes from the sale's time (ms) and the program's hold.
 */
export type NewCommission = Omit<NewCommissionRow, 'payable_at'> & { sale_ts: number; hold_days: number };

/**
 * Creates the commissions (one insert for the chunk), each `pending` until payable_at, held for review
 * where a rule says so (`holdForReview`). Caused: each one's credit and its `commission.created` (with its
 * hold). Returns the rows in the input's order.
 */
export async function create(
  tx: Tx,
  items: NewCommission[],
): Promise<{ rows: CommissionRecord[]; caused: Caused }> {
  const inserted = await dal.insertCommissions(
    tx,
    items.map(({ sale_ts, hold_days, ...row }): NewCommissionRow => ({
      ...row,
      payable_at: rules.create({ saleTs: sale_ts, holdDays: hold_days }).payable_at,
    })),
  );
  const held = await holdForReview(tx, inserted);
  const rows = inserted.map((r) => held.get(Number(r.id)) ?? r);
  return {
    rows,
    caused: {
      ledger: rows.map((r) =>
        rules.creditEntry(
          {
            id: Number(r.id),
            partner_id: Number(r.partner_id),
            partner_program_id: Number(r.partner_program_id),
          },
          Number(r.amount_cents),
        ),
      ),
      events: rows.flatMap((r) => commissionEvent('commission.created', r)),
      notifications: [],
    },
  };
}

/** A bonus a partner reached in a period: the commission it gets. */
export interface BonusAward {
  bonus_id: number;
  /** 'once' or the UTC month 'YYYY-MM'. */
  bonus_period: string;
  program_id: number;
  partner_id: number | string;
  partner_program_id: number | string;
  amount_cents: number;
  currency: string;
  group_id: number | null;
  /** When it was reached (a sale's time, or now): the hold runs from it. */
  at_ts: number;
  hold_days: number;
}

/**
 * A bonus's commissions (CONTRACT part four "Bonuses"): one of the bonus's amount per bonus, partner and
 * period, without a sale, priced by the rule `bonus`; created as any commission (`create`: pending until
 * payable_at, its credit, `commission.created` with its bonus_id). A period that has its commission already
 * (the unique index commissions_bonus_once, whatever runs concurrently or is delivered again) gets none:
 * only the rows made are returned.
 */
export function awardBonuses(tx: Tx, awards: readonly BonusAward[]) {
  return create(
    tx,
    awards.map((a) => ({
      sale_id: null,
      bonus_id: a.bonus_id,
      bonus_period: a.bonus_period,
      program_id: a.program_id,
      partner_id: a.partner_id,
      partner_program_id: a.partner_program_id,
      customer_id: null,
      amount_cents: a.amount_cents,
      currency: a.currency,
      group_id: a.group_id,
      rule: { source: 'bonus', type: 'flat', percent: null, amount_cents: a.amount_cents },
      sale_ts: a.at_ts,
      hold_days: a.hold_days,
    })),
  );
}

/**
 * The holds of new commissions (review-reasons.ts decides which, one statement; states.ts that a fresh
 * commission may be held): written, and returned by id. Announced by the creation's `commission.created`.
 */
export async function holdForReview(
  tx: Tx,
  created: CommissionRecord[],
): Promise<Map<number, CommissionRecord>> {
  const reasons = await reviewReasons(
    tx,
    created.map((r) => Number(r.id)),
  );
  if (reasons.size === 0) return new Map();
  const changes: { id: number; write: { review_reason: ReviewReason } }[] = [];
  for (const r of created) {
    const reason = reasons.get(Number(r.id));
    if (reason === undefined) continue;
    const d = rules.holdForReview(
      {
        status: r.status,
        paid_at: r.paid_at,
        payout_id: r.payout_id === null ? null : Number(r.payout_id),
        review_reason: r.review_reason,
      },
      reason,
    );
    if ('refused' in d) throw new TransitionInvariantError('holdForReview', Number(r.id), d.refused);
    changes.push({ id: Number(r.id), write: { review_reason: reason } });
  }
  const rows = await dal.writeCommissions(tx, changes);
  return new Map(rows.map((r) => [Number(r.id), r]));
}

/**
 * Commissions imported from another service (docs/importing.md), each in the state it had there: inserted
 * pending (payable at the source's due date) with one statement, then written into their state with
 * another. Caused: their ledger entries only (states.ts `createImported`: no event, no notification).
 * Returns the rows in the input's order.
 */
export async function createImported(
  tx: Tx,
  items: (NewCommissionRow & { state: ImportedState; paid_at: Date | null })[],
  source: string,
): Promise<{ rows: CommissionRecord[]; caused: Caused }> {
  const inserted = await dal.insertCommissions(
    tx,
    items.map(({ state: _s, paid_at: _p, ...row }) => row),
  );
  // Each imported commission has a sale of its own (the import's), which finds its item.
  const bySale = new Map(items.map((it) => [String(it.sale_id), it]));
  const decided = inserted.map((r) => {
    const it = bySale.get(String(r.sale_id))!;
    return rules.createImported(
      {
        id: Number(r.id),
        partner_id: Number(r.partner_id),
        partner_program_id: Number(r.partner_program_id),
        amount_cents: Number(r.amount_cents),
      },
      it.state,
      { name: source, paidAt: it.paid_at },
    );
  });
  const changes = inserted.flatMap((r, i) =>
    Object.keys(decided[i]!.write).length === 0 ? [] : [{ id: Number(r.id), write: decided[i]!.write }],
  );
  const written = new Map((await dal.writeCommissions(tx, changes)).map((r) => [Number(r.id), r]));
  return {
    rows: inserted.map((r) => written.get(Number(r.id)) ?? r),
    caused: { ledger: decided.flatMap((d) => d.ledger), events: [], notifications: [] },
  };
}

// ---- the advertiser's review and single payments ----

export const approve = async (tx: Tx, id: number) =>
  decideOne(tx, await dal.lockCommission(tx, { id }), rules.approve);

export const reject = async (tx: Tx, id: number, reason: string | null | undefined) =>
  decideOne(tx, await dal.lockCommission(tx, { id }), (c) => rules.reject(c, reason));

/** Marks one commission paid (`at`: seeded data's time of payment). */
export const payAlone = async (tx: Tx, id: number, at: At = 'now') =>
  decideOne(tx, await dal.lockCommission(tx, { id }), (c) => rules.payAlone(c, at), at);

// ---- the sweep ----

/** Approves up to `limit` due commissions that are not held (the approval sweep's round). */
export async function becomePayable(tx: Tx, limit: number) {
  return decideAll(tx, 'becomePayable', await dal.lockDue(tx, limit), rules.becomePayable);
}

// ---- payouts ----

/** What a payout may take now (read without locks for a preview, locked by a creation). */
export const payable = dal.payableCommissions;

/** The clawbacks each partner-program still owes (what a payout recovers first). */
export const clawbacksOwed = dal.clawbacksOwed;

/**
 * The commissions join their payouts (each counts its net amount): payout_id and the payout's rows. They
 * must have been read locked by `payable` in this transaction.
 */
export async function joinPayout(
  tx: Tx,
  joins: { payoutId: number; commission: CommissionState }[],
): Promise<{ rows: CommissionRecord[]; caused: Caused }> {
  const payoutOf = new Map(joins.map((j) => [j.commission.id, j.payoutId]));
  await dal.insertPayoutItems(
    tx,
    joins.map((j) => ({
      payout_id: j.payoutId,
      commission_id: j.commission.id,
      cents: rules.netCents(j.commission),
    })),
  );
  return decideAll(
    tx,
    'joinPayout',
    joins.map((j) => j.commission),
    // `payable` read only commissions of partners approved in the program.
    (c) => rules.joinPayout(c, payoutOf.get(c.id)!, true),
  );
}

/** A canceled payout's commissions leave it and are payable again; its rows stop being live. */
export async function leavePayout(tx: Tx, payoutId: number) {
  const cs = (await dal.lockPayoutCommissions(tx, payoutId)).filter(
    (c) => !('refused' in rules.leavePayout(c, payoutId)),
  );
  const left = await decideAll(tx, 'leavePayout', cs, (c) => rules.leavePayout(c, payoutId));
  await dal.retirePayoutItems(tx, payoutId);
  return left;
}

/**
 * A payout marked paid pays its live commissions: each `paid` (or keeps a refund's status) with its entry of
 * what the payout counted, and the payout's recovery of earlier clawbacks; the entries add up to
 * -amount_cents, the money sent.
 */
export async function payInPayout(
  tx: Tx,
  payout: { id: number; partner_id: number; partner_program_id: number; recovered_cents: number },
) {
  const cs = await dal.lockPayoutCommissions(tx, payout.id);
  const counted = new Map(cs.map((c) => [c.id, c.counted_cents]));
  const paid = await decideAll(tx, 'payInPayout', cs, (c) =>
    rules.payInPayout(c, payout.id, counted.get(c.id)!),
  );
  const recovery = rules.recoveryEntry({
    payout_id: payout.id,
    partner_id: payout.partner_id,
    partner_program_id: payout.partner_program_id,
    recovered_cents: payout.recovered_cents,
  });
  return { ...paid, caused: { ...paid.caused, ledger: [...paid.caused.ledger, ...recovery] } };
}

// ---- refunds ----

/**
 * The refund of the sale's commission (`deductRefund`, or `clawback` when it was paid): undefined when the
 * sale has none; refused when it already had one (the refund is then `skipped`). The row is locked, so
 * concurrent refunds of one sale deduct once.
 */
export async function refund(tx: Tx, saleId: number | string, r: Refund): Promise<Outcome | undefined> {
  return decideOne(tx, await dal.lockCommission(tx, { saleId }), (c) => rules.refund(c, r));
}
