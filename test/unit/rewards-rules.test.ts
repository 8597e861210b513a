// The rewards' pure rules (docs/rewards.md), without Postgres: the precedence table of `priceSale`, stepped
// rates, the ladder's moves and checks (cycles, a rule to its own group, unknown groups).
import t from 'tap';
import { parsePolicy, priceSale } from '../../shared/domain/commission-policy.ts';
import type { CommissionPolicy, Terms } from '../../shared/domain/commission-policy.ts';
import { findCycle, tierMoves, zeroMetrics } from '../../shared/domain/tiers.ts';
import type { TierRule } from '../../shared/domain/tiers.ts';
import { ladderError } from '../../services/api/modules/tiers/service.ts';

const policy = (p: unknown): CommissionPolicy => {
  const r = parsePolicy(p);
  if (typeof r === 'string') throw new Error(r);
  return r;
};
const sale = { amountCents: 10_000, productId: null, at: new Date('2026-06-01T00:00:00Z') };
const fresh = { commissions: 0, firstCommissionAt: null };

t.test('precedence: override > group > program; a product rule inside the policy applied wins', async (t) => {
  const program = policy({ type: 'percentage', percent: 10 });
  const group = policy({
    type: 'percentage',
    percent: 20,
    product_rules: [{ product_id: 'p', type: 'flat', amount_cents: 5 }],
  });
  const override = policy({ type: 'flat', amount_cents: 700 });
  const cases: [Terms, string | null, unknown][] = [
    [
      { override: null, group: null, program },
      null,
      { amount: 1000, rule: { source: 'group', percent: 10 } },
    ],
    [{ override: null, group, program }, null, { amount: 2000, rule: { source: 'group', percent: 20 } }],
    [
      { override: null, group, program },
      'p',
      { amount: 5, rule: { source: 'product', type: 'flat', amount_cents: 5 } },
    ],
    [
      { override, group, program },
      null,
      { amount: 700, rule: { source: 'override', type: 'flat', amount_cents: 700 } },
    ],
    [{ override, group, program }, 'p', { amount: 700, rule: { source: 'override' } }],
  ];
  for (const [terms, productId, want] of cases) {
    t.match(
      priceSale(terms, fresh, { ...sale, productId }),
      want,
      JSON.stringify({ terms: Object.keys(terms).filter((k) => terms[k as keyof Terms]), productId }),
    );
  }
});

t.test('stepped rates: the first `count` of a pair, then the policy; recurrence from the pair', async (t) => {
  const p = policy({
    type: 'percentage',
    percent: 20,
    recurring: { months: 12, first: { count: 2, type: 'flat', amount_cents: 999 } },
  });
  const terms = { override: null, group: null, program: p };
  const first = new Date('2026-01-15T00:00:00Z');
  t.match(priceSale(terms, fresh, sale), { amount: 999, rule: { source: 'first_period' } });
  t.match(priceSale(terms, { commissions: 1, firstCommissionAt: first }, sale), { amount: 999 });
  t.match(priceSale(terms, { commissions: 2, firstCommissionAt: first }, sale), {
    amount: 2000,
    rule: { source: 'group' },
  });
  t.same(
    priceSale(
      terms,
      { commissions: 5, firstCommissionAt: first },
      { ...sale, at: new Date('2027-02-01T00:00:00Z') },
    ),
    {
      noCommission: 'Recurring commission period of 12 months has ended',
    },
  );
  t.equal(
    parsePolicy({
      type: 'flat',
      amount_cents: 1,
      recurring: { first: { count: 121, type: 'flat', amount_cents: 1 } },
    }),
    'recurring.first.count must be an integer from 1 to 120',
  );
});

const rule = (over: Partial<TierRule>): TierRule => ({
  id: 1,
  fromGroupId: 1,
  toGroupId: 2,
  metric: 'sales_cents',
  window: 'lifetime',
  threshold: 100,
  carryExistingCustomers: true,
  ...over,
});

t.test('the ladder: the first rule that applies, then the next up; never back', async (t) => {
  const rules = [
    rule({ id: 1, fromGroupId: 1, toGroupId: 2, threshold: 100 }),
    rule({ id: 2, fromGroupId: 2, toGroupId: 3, threshold: 500 }),
    rule({ id: 3, fromGroupId: 1, toGroupId: 4, metric: 'customers', threshold: 1 }),
  ];
  const m =
    (sales: number, customers = 0) =>
    () => ({ ...zeroMetrics(), sales_cents: sales, customers });
  t.same(
    tierMoves(rules, 1, m(99)).map((r) => r.id),
    [],
  );
  t.same(
    tierMoves(rules, 1, m(100)).map((r) => r.id),
    [1],
    'reached: moves',
  );
  t.same(
    tierMoves(rules, 1, m(600)).map((r) => r.id),
    [1, 2],
    'two thresholds at once: two moves',
  );
  t.same(
    tierMoves(rules, 1, m(0, 1)).map((r) => r.id),
    [3],
    'another metric',
  );
  t.same(
    tierMoves(rules, 3, m(10_000)).map((r) => r.id),
    [],
    'no rule from the top',
  );
});

t.test('the ladder is checked: groups of the program, no rule to itself, no cycle', async (t) => {
  const groups = new Set([1, 2, 3]);
  const r = (from: number, to: number) => ({
    from_group_id: from,
    to_group_id: to,
    metric: 'sales_cents' as const,
    window: 'lifetime' as const,
    threshold: 1,
  });
  t.equal(ladderError([r(1, 2), r(2, 3)], groups), null);
  t.equal(ladderError([r(1, 1)], groups), 'tier_rules[0].to_group_id must differ from from_group_id');
  t.equal(
    ladderError([r(1, 2), r(9, 3)], groups),
    'tier_rules[1].from_group_id must be the id of a group of this program',
  );
  t.equal(
    ladderError([r(1, 2), r(2, 3), r(3, 1)], groups),
    'tier_rules form a cycle (groups 1 → 2 → 3 → 1): a partner could move back and forth',
  );
  t.same(
    findCycle([
      { fromGroupId: 1, toGroupId: 2 },
      { fromGroupId: 1, toGroupId: 3 },
      { fromGroupId: 3, toGroupId: 2 },
    ]),
    null,
    'two ways up is no cycle',
  );
});
