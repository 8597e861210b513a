import t from 'tap';
import { commissionAmount, parsePolicy, recurrenceBlocks } from '../../shared/domain/commission-policy.ts';
import type { CommissionPolicy } from '../../shared/domain/commission-policy.ts';
import { mulDivRoundHalfUp } from '../../shared/domain/money.ts';

const policy = (p: unknown) => {
  const r = parsePolicy(p);
  if (typeof r === 'string') throw new Error(r);
  return r;
};

t.test('round half up, exactly, in integer cents', async (t) => {
  t.equal(mulDivRoundHalfUp(1, 1, 2), 1, '0.5 rounds up');
  t.equal(mulDivRoundHalfUp(1, 1, 3), 0, '0.333 rounds down');
  t.equal(mulDivRoundHalfUp(5, 1, 3), 2, '1.667 rounds up');
  t.equal(mulDivRoundHalfUp(0, 7, 9), 0);
  t.equal(mulDivRoundHalfUp(2 ** 50, 3, 2 ** 10), 2 ** 40 * 3, 'no floating-point loss on large values');
});

t.test('percentage commission: amount × percent / 100, round half up', async (t) => {
  const p = policy({ type: 'percentage', percent: 30 });
  t.equal(commissionAmount(p, 10_000, null), 3000);
  t.equal(commissionAmount(p, 1, null), 0, '0.3 cents → 0');
  t.equal(commissionAmount(p, 5, null), 2, '1.5 cents → 2 (half up)');
  t.equal(commissionAmount(policy({ type: 'percentage', percent: 12.5 }), 999, null), 125, '124.875 → 125');
  t.equal(
    commissionAmount(policy({ type: 'percentage', percent: 33.3333 }), 300, null),
    100,
    '99.99999 → 100',
  );
});

t.test('flat commission and product rules override', async (t) => {
  const p = policy({
    type: 'percentage',
    percent: 30,
    product_rules: [
      { product_id: 'pro', type: 'flat', amount_cents: 500 },
      { product_id: 'team', type: 'percentage', percent: 10 },
    ],
  });
  t.equal(commissionAmount(p, 10_000, 'pro'), 500);
  t.equal(commissionAmount(p, 10_000, 'team'), 1000);
  t.equal(commissionAmount(p, 10_000, 'other'), 3000);
  t.equal(commissionAmount(policy({ type: 'flat', amount_cents: 1234 }), 1, null), 1234);
});

t.test('recurrence: lifetime by default; one_time; months', async (t) => {
  const first = new Date('2026-01-31T10:00:00Z');
  const lifetime = policy({ type: 'percentage', percent: 10 });
  t.same(lifetime.recurring, { mode: 'recurring', months: null });
  t.equal(recurrenceBlocks(lifetime, first, new Date('2036-01-01T00:00:00Z')), null);
  t.equal(recurrenceBlocks(lifetime, null, new Date()), null, 'the first sale always earns');
  const once = policy({ type: 'percentage', percent: 10, recurring: { mode: 'one_time' } });
  t.match(recurrenceBlocks(once, first, new Date('2026-02-01T00:00:00Z')), /One-time/);
  t.equal(recurrenceBlocks(once, null, new Date()), null);
  const year: CommissionPolicy = policy({
    type: 'percentage',
    percent: 10,
    recurring: { mode: 'recurring', months: 12 },
  });
  t.equal(recurrenceBlocks(year, first, new Date('2027-01-30T10:00:00Z')), null, 'inside 12 months');
  t.match(recurrenceBlocks(year, first, new Date('2027-02-01T10:00:00Z')), /12 months has ended/);
});

t.test('invalid policies are named', async (t) => {
  t.equal(parsePolicy(null), 'commission must be an object');
  t.match(parsePolicy({ type: 'percentage', percent: 101 }), /percent must be/);
  t.match(parsePolicy({ type: 'percentage', percent: 1.00001 }), /at most 4 decimals/);
  t.match(parsePolicy({ type: 'flat', amount_cents: -1 }), /amount_cents/);
  t.equal(
    parsePolicy({ type: 'flat', amount_cents: 1_000_000_000_001 }),
    'amount_cents must be at most 1000000000000',
  );
  t.equal(
    parsePolicy({
      type: 'percentage',
      percent: 10,
      product_rules: [{ product_id: 'p', type: 'flat', amount_cents: 2e12 }],
    }),
    'product_rules[0].amount_cents must be at most 1000000000000',
  );
  t.equal(
    (parsePolicy({ type: 'flat', amount_cents: 1_000_000_000_000 }) as { amount_cents: number }).amount_cents,
    1e12,
  );
  t.match(parsePolicy({ type: 'bonus' }), /type must be/);
  t.match(parsePolicy({ type: 'flat', amount_cents: 1, recurring: { mode: 'forever' } }), /recurring.mode/);
  t.match(parsePolicy({ type: 'flat', amount_cents: 1, recurring: { months: 0 } }), /months/);
  t.match(
    parsePolicy({ type: 'flat', amount_cents: 1, product_rules: [{ type: 'flat', amount_cents: 1 }] }),
    /product_id/,
  );
});
