// The commission lifecycle's rules (shared/commissions/states.ts), pure: every transition from every kind of
// state a commission can be in, allowed or refused (with the reason the API answers 409 with, or a refund
// answers `skipped` with), and for the allowed ones what they write and cause (ledger entries with their
// clamp, notifications, whether `commission.updated` is announced).
import t from 'tap';
import { commissionState } from '../helpers/commissions.ts';
import {
  REVIEW_REASONS,
  TRANSITIONS,
  approve,
  becomePayable,
  clawback,
  create,
  deductRefund,
  holdForReview,
  joinPayout,
  leavePayout,
  payAlone,
  payInPayout,
  refund,
  reject,
} from '../../shared/commissions/states.ts';
import type { CommissionState, Decision } from '../../shared/commissions/states.ts';

const PAID_AT = new Date('2026-01-10T00:00:00Z');
const base = commissionState({
  id: 5,
  status: 'pending',
  amount_cents: 3000,
  program_id: 2,
  transaction_id: 'order_9',
  due: false,
});

/** Every kind of state the transitions can meet. */
const STATES = {
  pendingNotDue: {},
  pendingDue: { due: true },
  held: { review_reason: 'self_referral', due: true },
  heldNotDue: { review_reason: 'partner_ip' },
  approved: { status: 'approved', due: true },
  approvedInPayout: { status: 'approved', due: true, payout_id: 8 },
  paidAlone: { status: 'paid', due: true, paid_at: PAID_AT },
  paidInPayout: { status: 'paid', due: true, payout_id: 8, paid_at: PAID_AT },
  refunded: { status: 'refunded', due: true, deducted_cents: 1000 },
  refundedNotDue: { status: 'refunded', deducted_cents: 1000 },
  refundedHeld: { status: 'refunded', due: true, deducted_cents: 1000, review_reason: 'self_referral' },
  refundedInPayout: { status: 'refunded', due: true, deducted_cents: 1000, payout_id: 8 },
  refundedAfterPaid: { status: 'refunded', due: true, deducted_cents: 1000, payout_id: 8, paid_at: PAID_AT },
  reversed: { status: 'reversed', due: true, deducted_cents: 3000 },
  reversedHeld: { status: 'reversed', deducted_cents: 3000, review_reason: 'self_referral' },
  reversedInPayout: { status: 'reversed', due: true, deducted_cents: 3000, payout_id: 8 },
  reversedAfterPaid: { status: 'reversed', due: true, deducted_cents: 3000, paid_at: PAID_AT },
} satisfies Record<string, Partial<CommissionState>>;
type StateName = keyof typeof STATES;
const stateOf = (name: StateName): CommissionState => ({
  ...base,
  ...(STATES[name] as Partial<CommissionState>),
});

const REFUND = { sale_cents: 10000, refund_cents: 2500, reason: 'damaged' };

/** Each transition, applied with the arguments its callers give it. */
const RUN: Record<keyof typeof TRANSITIONS, (c: CommissionState) => Decision> = {
  holdForReview: (c) => holdForReview(c, 'partner_ip'),
  approve: (c) => approve(c),
  reject: (c) => reject(c, 'fraud'),
  becomePayable: (c) => becomePayable(c),
  payAlone: (c) => payAlone(c),
  joinPayout: (c) => joinPayout(c, 9, true),
  leavePayout: (c) => leavePayout(c, 8),
  payInPayout: (c) => payInPayout(c, 8, 3000),
  deductRefund: (c) => deductRefund(c, REFUND),
  clawback: (c) => clawback(c, REFUND),
};

const IN_PAYOUT = 'Commission is in pending payout 8: mark the payout paid or cancel it';
const HELD = 'Commission is held for review: approve or reject it first';

/**
 * The whole table: for each transition, the states it is allowed from ('ok') and the refusal of every other
 * state. Written out, not computed, so that a change of any rule shows here.
 */
const EXPECTED: Record<keyof typeof TRANSITIONS, Record<StateName, string>> = {
  holdForReview: {
    pendingNotDue: 'ok',
    pendingDue: 'ok',
    held: 'Commission is already held for review',
    heldNotDue: 'Commission is already held for review',
    approved: 'Commission is not pending',
    approvedInPayout: 'Commission is not pending',
    paidAlone: 'Commission is not pending',
    paidInPayout: 'Commission is not pending',
    refunded: 'Commission is not pending',
    refundedNotDue: 'Commission is not pending',
    refundedHeld: 'Commission is not pending',
    refundedInPayout: 'Commission is not pending',
    refundedAfterPaid: 'Commission is not pending',
    reversed: 'Commission is not pending',
    reversedHeld: 'Commission is not pending',
    reversedInPayout: 'Commission is not pending',
    reversedAfterPaid: 'Commission is not pending',
  },
  approve: {
    pendingNotDue: 'Commission is not held for review',
    pendingDue: 'Commission is not held for review',
    held: 'ok',
    heldNotDue: 'ok',
    approved: 'Commission is not held for review',
    approvedInPayout: 'Commission is not held for review',
    paidAlone: 'Commission is not held for review',
    paidInPayout: 'Commission is not held for review',
    refunded: 'Commission is not held for review',
    refundedNotDue: 'Commission is not held for review',
    refundedHeld: 'ok',
    refundedInPayout: 'Commission is not held for review',
    refundedAfterPaid: 'Commission is not held for review',
    reversed: 'A reversed commission cannot be approved',
    reversedHeld: 'A reversed commission cannot be approved',
    reversedInPayout: 'A reversed commission cannot be approved',
    reversedAfterPaid: 'A reversed commission cannot be approved',
  },
  reject: {
    pendingNotDue: 'ok',
    pendingDue: 'ok',
    held: 'ok',
    heldNotDue: 'ok',
    approved: 'ok',
    approvedInPayout: IN_PAYOUT,
    paidAlone: 'A paid commission cannot be rejected',
    paidInPayout: 'A paid commission cannot be rejected',
    refunded: 'A refunded commission cannot be rejected',
    refundedNotDue: 'A refunded commission cannot be rejected',
    refundedHeld: 'A refunded commission cannot be rejected',
    refundedInPayout: 'A refunded commission cannot be rejected',
    refundedAfterPaid: 'A refunded commission cannot be rejected',
    reversed: 'Commission is already reversed',
    reversedHeld: 'Commission is already reversed',
    reversedInPayout: 'Commission is already reversed',
    reversedAfterPaid: 'Commission is already reversed',
  },
  becomePayable: {
    pendingNotDue: 'Commission is not due yet',
    pendingDue: 'ok',
    held: HELD,
    heldNotDue: HELD,
    approved: 'Commission is not pending',
    approvedInPayout: 'Commission is not pending',
    paidAlone: 'Commission is not pending',
    paidInPayout: 'Commission is not pending',
    refunded: 'Commission is not pending',
    refundedNotDue: 'Commission is not pending',
    refundedHeld: 'Commission is not pending',
    refundedInPayout: 'Commission is not pending',
    refundedAfterPaid: 'Commission is not pending',
    reversed: 'Commission is not pending',
    reversedHeld: 'Commission is not pending',
    reversedInPayout: 'Commission is not pending',
    reversedAfterPaid: 'Commission is not pending',
  },
  payAlone: {
    pendingNotDue: 'ok',
    pendingDue: 'ok',
    held: HELD,
    heldNotDue: HELD,
    approved: 'ok',
    approvedInPayout: IN_PAYOUT,
    paidAlone: 'Commission is already paid',
    paidInPayout: 'Commission is already paid',
    refunded: 'A refunded commission cannot be marked paid',
    refundedNotDue: 'A refunded commission cannot be marked paid',
    refundedHeld: 'A refunded commission cannot be marked paid',
    refundedInPayout: 'A refunded commission cannot be marked paid',
    refundedAfterPaid: 'A refunded commission cannot be marked paid',
    reversed: 'A reversed commission cannot be marked paid',
    reversedHeld: 'A reversed commission cannot be marked paid',
    reversedInPayout: 'A reversed commission cannot be marked paid',
    reversedAfterPaid: 'A reversed commission cannot be marked paid',
  },
  joinPayout: {
    pendingNotDue: 'Commission cannot be paid out',
    pendingDue: 'Commission cannot be paid out',
    held: 'Commission cannot be paid out',
    heldNotDue: 'Commission cannot be paid out',
    approved: 'ok',
    approvedInPayout: 'Commission cannot be paid out',
    paidAlone: 'Commission cannot be paid out',
    paidInPayout: 'Commission cannot be paid out',
    refunded: 'ok',
    refundedNotDue: 'Commission cannot be paid out',
    refundedHeld: 'Commission cannot be paid out',
    refundedInPayout: 'Commission cannot be paid out',
    refundedAfterPaid: 'Commission cannot be paid out',
    reversed: 'Commission cannot be paid out',
    reversedHeld: 'Commission cannot be paid out',
    reversedInPayout: 'Commission cannot be paid out',
    reversedAfterPaid: 'Commission cannot be paid out',
  },
  leavePayout: {
    pendingNotDue: 'Commission is not in payout 8',
    pendingDue: 'Commission is not in payout 8',
    held: 'Commission is not in payout 8',
    heldNotDue: 'Commission is not in payout 8',
    approved: 'Commission is not in payout 8',
    approvedInPayout: 'ok',
    paidAlone: 'Commission is not in payout 8',
    paidInPayout: 'Commission is not in payout 8',
    refunded: 'Commission is not in payout 8',
    refundedNotDue: 'Commission is not in payout 8',
    refundedHeld: 'Commission is not in payout 8',
    refundedInPayout: 'ok',
    refundedAfterPaid: 'Commission is not in payout 8',
    reversed: 'Commission is not in payout 8',
    reversedHeld: 'Commission is not in payout 8',
    reversedInPayout: 'ok',
    reversedAfterPaid: 'Commission is not in payout 8',
  },
  payInPayout: {
    pendingNotDue: 'Commission is not in payout 8',
    pendingDue: 'Commission is not in payout 8',
    held: 'Commission is not in payout 8',
    heldNotDue: 'Commission is not in payout 8',
    approved: 'Commission is not in payout 8',
    approvedInPayout: 'ok',
    paidAlone: 'Commission is not in payout 8',
    paidInPayout: 'Commission is not in payout 8',
    refunded: 'Commission is not in payout 8',
    refundedNotDue: 'Commission is not in payout 8',
    refundedHeld: 'Commission is not in payout 8',
    refundedInPayout: 'ok',
    refundedAfterPaid: 'Commission is not in payout 8',
    reversed: 'Commission is not in payout 8',
    reversedHeld: 'Commission is not in payout 8',
    reversedInPayout: 'ok',
    reversedAfterPaid: 'Commission is not in payout 8',
  },
  deductRefund: {
    pendingNotDue: 'ok',
    pendingDue: 'ok',
    held: 'ok',
    heldNotDue: 'ok',
    approved: 'ok',
    approvedInPayout: 'ok',
    paidAlone: 'Commission is already paid',
    paidInPayout: 'Commission is already paid',
    refunded: 'Commission already refunded',
    refundedNotDue: 'Commission already refunded',
    refundedHeld: 'Commission already refunded',
    refundedInPayout: 'Commission already refunded',
    refundedAfterPaid: 'Commission already refunded',
    reversed: 'Commission already reversed',
    reversedHeld: 'Commission already reversed',
    reversedInPayout: 'Commission already reversed',
    reversedAfterPaid: 'Commission already reversed',
  },
  clawback: {
    pendingNotDue: 'Commission cannot be paid out',
    pendingDue: 'Commission cannot be paid out',
    held: 'Commission cannot be paid out',
    heldNotDue: 'Commission cannot be paid out',
    approved: 'Commission cannot be paid out',
    approvedInPayout: 'Commission cannot be paid out',
    paidAlone: 'ok',
    paidInPayout: 'ok',
    refunded: 'Commission already refunded',
    refundedNotDue: 'Commission already refunded',
    refundedHeld: 'Commission already refunded',
    refundedInPayout: 'Commission already refunded',
    refundedAfterPaid: 'Commission already refunded',
    reversed: 'Commission already reversed',
    reversedHeld: 'Commission already reversed',
    reversedInPayout: 'Commission already reversed',
    reversedAfterPaid: 'Commission already reversed',
  },
};

const verdict = (d: Decision) => ('refused' in d ? d.refused : 'ok');

t.test('every transition from every state: allowed, or refused with its reason', async (t) => {
  for (const transition of Object.keys(TRANSITIONS) as (keyof typeof TRANSITIONS)[]) {
    for (const name of Object.keys(STATES) as StateName[]) {
      t.equal(
        verdict(RUN[transition](stateOf(name))),
        EXPECTED[transition][name],
        `${transition} from ${name}`,
      );
    }
  }
  t.same(Object.keys(EXPECTED).sort(), Object.keys(TRANSITIONS).sort(), 'the table names every transition');
});

const done = (d: Decision) => {
  if ('refused' in d) throw new Error(`refused: ${d.refused}`);
  return d;
};

t.test('create: pending, payable at the sale time plus the hold', async (t) => {
  t.same(create({ saleTs: Date.parse('2026-01-31T23:30:00.000Z'), holdDays: 30 }), {
    status: 'pending',
    payable_at: '2026-03-02T23:30:00.000Z',
  });
  t.same(
    REVIEW_REASONS,
    ['self_referral', 'partner_ip', 'bot_traffic', 'disposable_email', 'shared_payout_method', 'paid_search'],
    'the hold reasons, in precedence order',
  );
  t.same(done(holdForReview(stateOf('pendingDue'), 'self_referral')), {
    write: { review_reason: 'self_referral' },
    ledger: [],
    notifications: [],
    announce: false,
  });
});

t.test(
  'approve: approved at once when due, else pending for the sweep; a refund keeps its status',
  async (t) => {
    t.same(done(approve(stateOf('held'))).write, { review_reason: null, status: 'approved' });
    t.same(done(approve(stateOf('heldNotDue'))).write, { review_reason: null });
    t.same(done(approve(stateOf('refundedHeld'))).write, { review_reason: null });
    t.ok(done(approve(stateOf('held'))).announce, 'commission.updated');
    t.same(done(approve(stateOf('held'))).ledger, [], 'no money moves');
  },
);

t.test('reject: reversed as a full refund, clamped, and the partner told', async (t) => {
  const d = done(reject(stateOf('held'), '  own purchase '));
  t.same(d.write, { status: 'reversed', deducted_cents: 3000, refund_reason: 'rejected: own purchase' });
  t.same(d.ledger, [
    {
      topic: 'ledger',
      entry_key: 'commission:5:refund',
      kind: 'commission_reversed',
      partner_id: 3,
      partner_program_id: 4,
      commission_id: 5,
      amount_cents: -3000,
      clamp_at_zero: true,
    },
  ]);
  t.same(d.notifications, [
    {
      notification_key: 'commission:5:rejected:partner',
      recipient_type: 'partner',
      partner_id: 3,
      workspace_id: null,
      program_id: 2,
      kind: 'commission_rejected',
      title: 'A commission was rejected',
      body: 'Your commission of 30.00 USD on sale order_9 was rejected after review. Reason: own purchase',
      data: { commission_id: 5, transaction_id: 'order_9', refund_reason: 'rejected: own purchase' },
    },
  ]);
  t.match(done(reject(stateOf('approved'), null)).notifications[0], {
    body: /Reason: No reason given$/,
    data: { refund_reason: 'rejected' },
  });
  t.ok(d.announce);
});

t.test('the sweep, payments and payouts write what they should', async (t) => {
  t.same(done(becomePayable(stateOf('pendingDue'))), {
    write: { status: 'approved' },
    ledger: [],
    notifications: [],
    announce: true,
  });
  const alone = done(payAlone(stateOf('approved')));
  t.same(alone.write, { status: 'paid', paid_at: 'now' });
  t.match(alone.ledger, [{ entry_key: 'commission:5:paid', kind: 'commission_paid', amount_cents: -3000 }]);
  t.notOk('payout_id' in alone.ledger[0]!, 'paid alone: no payout');
  const at = new Date('2026-02-01T00:00:00Z');
  t.same(
    done(payAlone(stateOf('pendingNotDue'), at)).write,
    { status: 'paid', paid_at: at },
    'seeded history',
  );

  t.same(done(joinPayout(stateOf('approved'), 9, true)), {
    write: { payout_id: 9 },
    ledger: [],
    notifications: [],
    announce: false,
  });
  t.equal(
    verdict(joinPayout(stateOf('approved'), 9, false)),
    'Commission cannot be paid out',
    'partner not approved',
  );
  t.equal(
    verdict(joinPayout(stateOf('refunded'), 9, true)),
    'ok',
    'a partial refund with something left, once due',
  );
  t.equal(
    verdict(joinPayout({ ...stateOf('refunded'), deducted_cents: 3000 }, 9, true)),
    'Commission cannot be paid out',
    'nothing left',
  );
  t.same(done(leavePayout(stateOf('approvedInPayout'), 8)).write, { payout_id: null });

  const inPayout = done(payInPayout(stateOf('approvedInPayout'), 8, 2500));
  t.same(inPayout.write, { status: 'paid', paid_at: 'now' });
  t.same(inPayout.ledger, [
    {
      topic: 'ledger',
      entry_key: 'commission:5:paid',
      kind: 'commission_paid',
      partner_id: 3,
      partner_program_id: 4,
      commission_id: 5,
      payout_id: 8,
      amount_cents: -2500,
      clamp_at_zero: false,
    },
  ]);
  t.same(
    done(payInPayout(stateOf('refundedInPayout'), 8, 3000)).write,
    { paid_at: 'now' },
    'refunded while the payout was pending: keeps its status, what was counted is a clawback',
  );
});

t.test('refunds: proportional, full or partial, clamped unless paid (a clawback)', async (t) => {
  const partial = done(refund(stateOf('approved'), REFUND));
  t.same(partial.write, { status: 'refunded', deducted_cents: 750, refund_reason: 'damaged' });
  t.match(partial.ledger, [
    { entry_key: 'commission:5:refund', kind: 'commission_refunded', amount_cents: -750 },
  ]);
  t.equal(partial.ledger[0]!.clamp_at_zero, true, 'unpaid: clamped');
  t.same(partial.notifications, [
    {
      notification_key: 'commission:5:refund:partner',
      recipient_type: 'partner',
      partner_id: 3,
      workspace_id: null,
      program_id: 2,
      kind: 'commission_refunded',
      title: 'A commission was partly refunded',
      body: 'A refund on sale order_9 deducted 7.50 USD from your commission. Reason: damaged',
      data: { commission_id: 5, transaction_id: 'order_9', deduction_cents: 750, refund_reason: 'damaged' },
      mail: true,
    },
  ]);

  const full = done(refund(stateOf('pendingNotDue'), { ...REFUND, refund_cents: null, reason: null }));
  t.same(full.write, { status: 'reversed', deducted_cents: 3000, refund_reason: null });
  t.match(full.notifications[0], {
    kind: 'commission_reversed',
    title: 'A commission was reversed',
    body: /Reason: No reason given$/,
  });

  const back = done(refund(stateOf('paidAlone'), REFUND));
  t.same(back, done(clawback(stateOf('paidAlone'), REFUND)), 'a paid commission: the clawback');
  t.equal(back.ledger[0]!.clamp_at_zero, false, 'paid: in full');
  t.same(back.notifications[1], {
    notification_key: 'commission:5:refund:advertiser',
    recipient_type: 'advertiser',
    partner_id: 3,
    workspace_id: 1,
    program_id: 2,
    kind: 'paid_commission_refunded',
    title: 'Manual review: a paid commission was refunded',
    body: 'Commission 5 had already been paid when sale order_9 was refunded; 7.50 USD is now owed by the partner. Reason: damaged',
    data: { commission_id: 5, transaction_id: 'order_9', deduction_cents: 750 },
  });
  t.equal(verdict(refund(stateOf('refunded'), REFUND)), 'Commission already refunded', 'skipped');
});
