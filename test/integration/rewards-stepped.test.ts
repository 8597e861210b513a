// Stepped recurring rates (CONTRACT part four "Stepped recurring rates"; docs/rewards.md) on the real stack:
// `recurring.first { count, … }` prices the first `count` commissions of each partner–customer pair, later
// ones the policy's rate; a refunded commission still counts as one of the first; a product rule still
// wins; concurrent sales of one customer get exactly `count` at the first rate; `count` outside 1..120 is
// a 400 naming the field.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram } from '../helpers/partners.ts';
import { commissionsOf, customerOf, trackSale } from '../helpers/rewards.ts';
import { postJson } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'attribution-worker', 'reversal-worker']);
const owner = await signup(svc);
const policy = {
  type: 'percentage',
  percent: 20,
  recurring: { mode: 'recurring', months: null, first: { count: 3, type: 'percentage', percent: 40 } },
  product_rules: [{ product_id: 'pro', type: 'flat', amount_cents: 111 }],
};
const program = await apiProgram(svc, owner, { commission: policy });
const partner = await addPartner(svc, owner, program.id);

async function sales(customer: string, n: number, body: Record<string, unknown> = {}) {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await trackSale(svc, program.token, { customer_key: customer, ...body });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    ids.push(r.body.commission_id as number);
  }
  return ids;
}

t.test('the first `count` commissions of a pair at the first rate, then the policy’s', async (t) => {
  const c1 = await customerOf(sql, program.id, partner);
  const c2 = await customerOf(sql, program.id, partner);
  const one = await sales(c1, 5);
  const two = await sales(c2, 1);
  const all = await commissionsOf(svc, owner, program.id);
  t.same(
    one.map((id) => [all.get(id)!.amount_cents, all.get(id)!.rule?.source]),
    [
      [4000, 'first_period'],
      [4000, 'first_period'],
      [4000, 'first_period'],
      [2000, 'group'],
      [2000, 'group'],
    ],
  );
  t.same(
    [all.get(two[0]!)!.amount_cents, all.get(two[0]!)!.rule?.source],
    [4000, 'first_period'],
    'per pair',
  );
  t.match(all.get(one[0]!)!.rule, { type: 'percentage', percent: 40, amount_cents: null });
});

t.test('a refunded commission still counts as one of the first; a product rule wins', async (t) => {
  const c = await customerOf(sql, program.id, partner);
  const txn = `refunded-${Date.now()}`;
  const first = await trackSale(svc, program.token, { customer_key: c, transaction_id: txn });
  t.equal(first.status, 200);
  const refund = await postJson(
    `${svc.baseUrl}/api/v1/track/refund`,
    { transaction_id: txn },
    bearer(program.token),
  );
  t.match(refund.body, { status: 'reversed' });
  const pro = await sales(c, 1, { product_id: 'pro' });
  const rest = await sales(c, 2);
  const all = await commissionsOf(svc, owner, program.id);
  t.match(
    all.get(pro[0]!),
    { amount_cents: 111, rule: { source: 'product' } },
    'the product rule, and it counts',
  );
  t.same(
    rest.map((id) => [all.get(id)!.amount_cents, all.get(id)!.rule?.source]),
    [
      [4000, 'first_period'],
      [2000, 'group'],
    ],
    'the refunded one and the product one were two of the first three: the third is at 40%, the fourth at 20%',
  );
});

t.test('concurrent sales of one customer: exactly `count` at the first rate', async (t) => {
  const c = await customerOf(sql, program.id, partner);
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => trackSale(svc, program.token, { customer_key: c })),
  );
  t.same(
    answers.map((a) => a.status),
    Array(8).fill(200),
  );
  const all = await commissionsOf(svc, owner, program.id);
  const amounts = answers.map((a) => all.get(a.body.commission_id as number)!.amount_cents).sort();
  t.same(amounts, [2000, 2000, 2000, 2000, 2000, 4000, 4000, 4000]);
});

t.test('count outside 1..120 names the field and changes nothing', async (t) => {
  const url = `${svc.baseUrl}/api/advertiser/affiliate-programs/${program.id}`;
  for (const count of [0, 121, 1.5, 'x']) {
    const r = await send(
      'PUT',
      url,
      { commission: { ...policy, recurring: { first: { count, type: 'flat', amount_cents: 1 } } } },
      bearer(owner.session),
    );
    t.same(
      [r.status, r.body],
      [400, { error: 'recurring.first.count must be an integer from 1 to 120' }],
      String(count),
    );
  }
  const bad = await send(
    'PUT',
    url,
    { commission: { ...policy, recurring: { first: { count: 2, type: 'percentage', percent: 140 } } } },
    bearer(owner.session),
  );
  t.same(bad.body, { error: 'recurring.first.percent must be a number from 0 to 100 (at most 4 decimals)' });
  const [row] = await sql<
    { commission: unknown }[]
  >`select commission from programs where id = ${program.id}`;
  t.match(row!.commission, { recurring: { first: { count: 3, percent: 40 } } }, 'the policy as it was');
});
