// The pure rules of holding, reviewing and paying out: who a run pays how much (clawbacks recovered, never
// below zero, the minimum), the ledger entries of a payment (they add up to what was sent), which status
// changes are refused with which 409, the payout files byte for byte, and payable_at.
import t from 'tap';
import { commissionState as state } from '../helpers/commissions.ts';
import {
  checkCancelable,
  checkPayable,
  payoutMethodOf,
  planPayouts,
} from '../../services/api/modules/payouts/service.ts';
import type { Candidate, Payout } from '../../services/api/modules/payouts/service.ts';
import {
  CSV_HEADER,
  WISE_HEADER,
  decimalAmount,
  exportPayouts,
} from '../../services/api/modules/payouts/export.ts';
import {
  approve,
  deductionEntry,
  payAlone,
  payInPayout,
  payableAt,
  recoveryEntry,
  reject,
  rejectionReason,
} from '../../shared/commissions/states.ts';
import type { Decision } from '../../shared/commissions/states.ts';
import { HttpError } from '../../shared/http/server.ts';

const errorOf = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof HttpError) return `${err.statusCode} ${err.message}`;
    throw err;
  }
};

const cand = (id: number, pp: number, net: number, partner = pp * 10): Candidate => ({
  id,
  partner_id: partner,
  partner_program_id: pp,
  net_cents: net,
  currency: 'USD',
});

t.test('a run: one payout per partner-program, its commissions less the clawbacks it owes', async (t) => {
  const { payouts, belowMinimum } = planPayouts(
    [cand(5, 1, 3000), cand(2, 1, 1500), cand(9, 2, 800), cand(7, 3, 400)],
    new Map([
      [1, 1000], // owes 1000: recovered in full
      [2, 5000], // owes more than it earned: the payout is 0, 4200 carries over
      [3, -200], // a negative sum is nothing owed
    ]),
    0,
  );
  t.same(belowMinimum, []);
  t.same(payouts, [
    {
      partner_id: 10,
      partner_program_id: 1,
      currency: 'USD',
      commission_ids: [2, 5],
      commission_cents: [1500, 3000],
      commissions_cents: 4500,
      recovered_cents: 1000,
      amount_cents: 3500,
    },
    {
      partner_id: 20,
      partner_program_id: 2,
      currency: 'USD',
      commission_ids: [9],
      commission_cents: [800],
      commissions_cents: 800,
      recovered_cents: 800,
      amount_cents: 0,
    },
    {
      partner_id: 30,
      partner_program_id: 3,
      currency: 'USD',
      commission_ids: [7],
      commission_cents: [400],
      commissions_cents: 400,
      recovered_cents: 0,
      amount_cents: 400,
    },
  ]);
  for (const p of payouts) {
    t.equal(p.amount_cents, p.commissions_cents - p.recovered_cents);
    t.ok(p.amount_cents >= 0);
  }
});

t.test('a run: below the minimum nothing is paid and the commissions wait', async (t) => {
  const { payouts, belowMinimum } = planPayouts(
    [cand(1, 1, 3000), cand(2, 2, 999), cand(3, 3, 2000)],
    new Map([[3, 1500]]),
    1000,
  );
  t.same(
    payouts.map((p) => [p.partner_program_id, p.amount_cents]),
    [[1, 3000]],
  );
  t.same(belowMinimum, [
    {
      partner_id: 20,
      partner_program_id: 2,
      amount_cents: 999,
      commissions_cents: 999,
      recovered_cents: 0,
      commission_ids: [2],
    },
    {
      partner_id: 30,
      partner_program_id: 3,
      amount_cents: 500,
      commissions_cents: 2000,
      recovered_cents: 1500,
      commission_ids: [3],
    },
  ]);
  t.same(planPayouts([], new Map(), 0), { payouts: [], belowMinimum: [] });
  // With a zero minimum, a payout that recovers all of its commissions is still made: it settles them.
  t.same(
    planPayouts([cand(1, 1, 100)], new Map([[1, 100]]), 0).payouts.map((p) => p.amount_cents),
    [0],
  );
  t.same(planPayouts([cand(1, 1, 100)], new Map([[1, 100]]), 1).payouts, []);
});

/** A payment's entries: each commission's (lifecycle `payInPayout`) and the payout's recovery. */
function paymentEntries(p: {
  payout_id: number;
  partner_id: number;
  partner_program_id: number;
  recovered_cents: number;
  commissions: { id: number; counted_cents: number }[];
}) {
  const each = p.commissions.flatMap((c) => {
    const d = payInPayout(
      state({
        id: c.id,
        partner_id: p.partner_id,
        partner_program_id: p.partner_program_id,
        payout_id: p.payout_id,
      }),
      p.payout_id,
      c.counted_cents,
    );
    return 'refused' in d ? [] : d.ledger;
  });
  return [...each, ...recoveryEntry(p)];
}

t.test('a payment: entries add up to exactly the money sent', async (t) => {
  const entries = paymentEntries({
    payout_id: 42,
    partner_id: 3,
    partner_program_id: 4,
    recovered_cents: 700,
    commissions: [
      { id: 11, counted_cents: 500 },
      { id: 12, counted_cents: 300 },
    ],
  });
  t.same(entries, [
    {
      topic: 'ledger',
      entry_key: 'commission:11:paid',
      kind: 'commission_paid',
      partner_id: 3,
      partner_program_id: 4,
      commission_id: 11,
      payout_id: 42,
      amount_cents: -500,
      clamp_at_zero: false,
    },
    {
      topic: 'ledger',
      entry_key: 'commission:12:paid',
      kind: 'commission_paid',
      partner_id: 3,
      partner_program_id: 4,
      commission_id: 12,
      payout_id: 42,
      amount_cents: -300,
      clamp_at_zero: false,
    },
    {
      topic: 'ledger',
      entry_key: 'payout:42:recovered',
      kind: 'clawback_recovered',
      partner_id: 3,
      partner_program_id: 4,
      commission_id: null,
      payout_id: 42,
      amount_cents: 700,
      clamp_at_zero: false,
    },
  ]);
  t.equal(
    entries.reduce((s, e) => s + e.amount_cents, 0),
    -100,
    'the balances fall by amount_cents (800 - 700)',
  );
  t.equal(
    paymentEntries({
      payout_id: 1,
      partner_id: 1,
      partner_program_id: 1,
      recovered_cents: 0,
      commissions: [],
    }).length,
    0,
    'no recovery entry when nothing was recovered',
  );
});

t.test('payout statuses: mark paid and cancel only from pending', async (t) => {
  t.equal(
    errorOf(() => checkPayable('pending')),
    null,
  );
  t.equal(
    errorOf(() => checkPayable('paid')),
    '409 Payout already paid',
  );
  t.equal(
    errorOf(() => checkPayable('canceled')),
    '409 A canceled payout cannot be marked paid',
  );
  t.equal(
    errorOf(() => checkCancelable('pending')),
    null,
  );
  t.equal(
    errorOf(() => checkCancelable('paid')),
    '409 A paid payout cannot be canceled',
  );
  t.equal(
    errorOf(() => checkCancelable('canceled')),
    '409 Payout already canceled',
  );
});

t.test('commissions: paid alone, approved, rejected', async (t) => {
  // The lifecycle's rules; the API answers a refusal 409 with its reason.
  const answer = (d: Decision) => ('refused' in d ? `409 ${d.refused}` : null);
  const c = state({ status: 'approved' });
  t.equal(answer(payAlone(c)), null);
  t.equal(
    answer(payAlone({ ...c, payout_id: 8 })),
    '409 Commission is in pending payout 8: mark the payout paid or cancel it',
  );
  t.equal(
    answer(payAlone({ ...c, status: 'pending', review_reason: 'self_referral' })),
    '409 Commission is held for review: approve or reject it first',
  );
  t.equal(answer(payAlone({ ...c, status: 'paid', payout_id: 8 })), '409 Commission is already paid');

  t.equal(answer(approve({ ...c, status: 'pending', review_reason: 'partner_ip' })), null);
  t.equal(
    answer(approve({ ...c, status: 'refunded', review_reason: 'partner_ip' })),
    null,
    'a partly refunded held commission: its remainder may be approved',
  );
  t.equal(answer(approve({ ...c, status: 'pending' })), '409 Commission is not held for review');
  t.equal(
    answer(approve({ ...c, status: 'reversed', review_reason: 'self_referral' })),
    '409 A reversed commission cannot be approved',
  );

  t.equal(answer(reject({ ...c, status: 'pending' }, null)), null);
  t.equal(answer(reject({ ...c, status: 'approved' }, null)), null);
  t.equal(
    answer(reject({ ...c, status: 'approved', payout_id: 3 }, null)),
    '409 Commission is in pending payout 3: mark the payout paid or cancel it',
  );
  for (const [status, error] of [
    ['paid', '409 A paid commission cannot be rejected'],
    ['reversed', '409 Commission is already reversed'],
    ['refunded', '409 A refunded commission cannot be rejected'],
  ] as const) {
    t.equal(answer(reject({ ...c, status }, null)), error);
  }
  t.equal(rejectionReason(' fraud  '), 'rejected: fraud');
  t.equal(rejectionReason(''), 'rejected');
  t.equal(rejectionReason(null), 'rejected');
  t.same(deductionEntry({ id: 9, partner_id: 3, partner_program_id: 4 }, 1250, true, false), {
    topic: 'ledger',
    entry_key: 'commission:9:refund',
    kind: 'commission_reversed',
    partner_id: 3,
    partner_program_id: 4,
    commission_id: 9,
    amount_cents: -1250,
    clamp_at_zero: true,
  });
});

t.test('payable_at is the sale time plus the hold, in whole days', async (t) => {
  const sale = Date.parse('2026-01-31T23:30:00.000Z');
  t.equal(payableAt(sale, 0), '2026-01-31T23:30:00.000Z');
  t.equal(payableAt(sale, 30), '2026-03-02T23:30:00.000Z');
  t.equal(payableAt(sale, 365), '2027-01-31T23:30:00.000Z');
});

const payout = (over: Partial<Payout>): Payout => ({
  id: 1,
  program_id: 9,
  partner_id: 3,
  partner_name: 'Ann',
  partner_email: 'ann@example.com',
  payout_method: null,
  amount_cents: 12_345,
  commissions_cents: 12_345,
  recovered_cents: 0,
  currency: 'USD',
  status: 'pending',
  commission_ids: [4, 5],
  reference: null,
  is_test: false,
  created_at: '2026-05-01T10:00:00.000Z',
  paid_at: null,
  canceled_at: null,
  updated_at: '2026-05-01T10:00:00.000Z',
  ...over,
});

t.test('the payout files', async (t) => {
  const payouts = [
    payout({ id: 1, payout_method: { type: 'paypal', email: 'ann@pp.example', details: null } }),
    payout({
      id: 2,
      partner_id: 4,
      partner_name: '=Bob, Inc',
      partner_email: 'bob@example.com',
      payout_method: {
        type: 'wise',
        email: 'bob@wise.example',
        details: { currency: 'eur', receiver_type: 'business' },
      },
      amount_cents: 5,
      commission_ids: [6],
    }),
    payout({
      id: 3,
      partner_id: 5,
      partner_name: 'Cy',
      partner_email: 'cy@example.com',
      payout_method: null,
    }),
    payout({
      id: 4,
      partner_id: 6,
      partner_name: 'Di',
      payout_method: { type: 'paypal', email: 'di@pp.example', details: null },
      amount_cents: 0,
      commissions_cents: 300,
      recovered_cents: 300,
    }),
    payout({
      id: 5,
      partner_id: 7,
      partner_name: 'Ed',
      payout_method: {
        type: 'bank_transfer',
        email: null,
        details: 'Ed Example, IBAN DE89 3704 0044 0532 0130 00',
      },
      amount_cents: 100_000,
      commissions_cents: 100_000,
    }),
  ];

  const paypal = exportPayouts('paypal', payouts, 'Acme Pro');
  t.equal(
    paypal.body,
    'ann@pp.example,123.45,USD,payout-1,Affiliate payout: Acme Pro,PAYPAL\r\n',
    'PayPal: no header, only PayPal methods, nothing for a payout of 0',
  );
  t.same([paypal.rows, paypal.left_out], [1, 4]);

  const wise = exportPayouts('wise', payouts, 'Acme Pro');
  t.equal(
    wise.body,
    `${WISE_HEADER.join(',')}\r\n` + '"\'=Bob, Inc",bob@wise.example,Payout 2,BUSINESS,USD,0.05,USD,EUR\r\n',
    'Wise: its header, only Wise methods, a formula-looking name neutralised',
  );
  t.same([wise.rows, wise.left_out], [1, 4]);

  const csv = exportPayouts('csv', payouts, 'Acme Pro');
  const lines = csv.body.split('\r\n');
  t.equal(lines[0], CSV_HEADER.join(','));
  t.equal(
    lines[1],
    '1,pending,3,Ann,ann@example.com,paypal,ann@pp.example,,123.45,12345,USD,12345,0,2,2026-05-01T10:00:00.000Z,,,',
  );
  t.equal(
    lines[3],
    '3,pending,5,Cy,cy@example.com,,,,123.45,12345,USD,12345,0,2,2026-05-01T10:00:00.000Z,,,no payout method',
    'a partner without a method is listed, flagged',
  );
  t.equal(
    lines[5],
    '5,pending,7,Ed,ann@example.com,bank_transfer,,"Ed Example, IBAN DE89 3704 0044 0532 0130 00",1000.00,100000,USD,100000,0,2,2026-05-01T10:00:00.000Z,,,',
    'a bank transfer is a method: its details for the advertiser',
  );
  t.equal(lines.length, 7, 'every payout, and the last CRLF');
  t.same([csv.rows, csv.left_out], [5, 0]);
  const paypalOnly = exportPayouts(
    'paypal',
    [payout({ payout_method: { type: 'paypal', email: null, details: null } })],
    'x',
  );
  t.same([paypalOnly.rows, paypalOnly.left_out, paypalOnly.body], [0, 1, ''], 'PayPal without an email');
});

t.test('amounts in the files: two decimals, integer arithmetic', async (t) => {
  t.equal(decimalAmount(0), '0.00');
  t.equal(decimalAmount(7), '0.07');
  t.equal(decimalAmount(100_050), '1000.50');
  t.equal(decimalAmount(1_000_000_000_000), '10000000000.00');
  t.equal(decimalAmount(-250), '-2.50');
});

t.test('a stored payout method is read strictly', async (t) => {
  t.equal(payoutMethodOf(null), null);
  t.equal(payoutMethodOf({ type: 'cheque' }), null);
  t.equal(payoutMethodOf('paypal'), null);
  t.same(payoutMethodOf({ type: 'paypal', email: '  a@b.co ' }), {
    type: 'paypal',
    email: 'a@b.co',
    details: null,
  });
  t.same(payoutMethodOf({ type: 'wise', email: '' }), { type: 'wise', email: null, details: null });
});
