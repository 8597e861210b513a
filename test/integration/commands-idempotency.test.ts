// Idempotency-Key as Stripe has it (CONTRACT "Retries and idempotency"): the same key with the same body
// replays the recorded answer; the same key with a different body is refused with 409 and applies nothing,
// whether the first request is already answered or still in flight, for lead, sale and refund alike.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker', 'reversal-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const program = await createProgram(sql);
await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 30 })} where id = ${program.id}`;
const link = await createLink(sql, program.id);
const REUSED = { error: 'Idempotency-Key was used with a different request' };
let n = 0;
const unique = (label: string) => `${label}-${Date.now()}-${++n}`;

const post = (path: string, body: unknown, key: string) =>
  postJson(url(`/api/v1/track/${path}`), body, {
    authorization: `Bearer ${program.token}`,
    'idempotency-key': key,
  });

async function click(): Promise<string> {
  const r = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
  });
  if (r.status !== 200) throw new Error(`click failed: ${JSON.stringify(r.body)}`);
  return r.body.click_id as string;
}

async function salesOf(txns: string[]): Promise<string[]> {
  const rows = await sql<{ transaction_id: string }[]>`
    select transaction_id from sales where transaction_id = any(${txns}) order by transaction_id`;
  return rows.map((r) => r.transaction_id);
}

t.test(
  'sale: same key and body replays; same key with another body is 409 and records nothing',
  async (t) => {
    const clickId = await click();
    const key = unique('sale-key');
    const body = { transaction_id: unique('txn'), amount_cents: 1000, click_id: clickId };
    const first = await post('sale', body, key);
    t.equal(first.status, 200, JSON.stringify(first.body));
    // Key order and whitespace are not parameters: the same request.
    const reordered = { click_id: clickId, amount_cents: 1000, transaction_id: body.transaction_id };
    t.same((await post('sale', reordered, key)).body, first.body, 'the same parameters replay the answer');
    const otherAmount = await post('sale', { ...body, amount_cents: 999 }, key);
    t.same([otherAmount.status, otherAmount.body], [409, REUSED], 'another amount: refused');
    const otherTxn = { ...body, transaction_id: unique('txn') };
    const refused = await post('sale', otherTxn, key);
    t.same([refused.status, refused.body], [409, REUSED], 'another transaction_id: refused');
    t.same(await salesOf([body.transaction_id, otherTxn.transaction_id]), [body.transaction_id]);
    t.same((await post('sale', body, key)).body, first.body, 'the first body still replays');
  },
);

t.test('lead and refund: another body under a used key is 409', async (t) => {
  const clickId = await click();
  const leadKey = unique('lead-key');
  const lead = { click_id: clickId, customer_key: unique('user') };
  const first = await post('lead', lead, leadKey);
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.same((await post('lead', lead, leadKey)).body, first.body, 'replayed');
  const other = await post('lead', { ...lead, email: 'someone@example.com' }, leadKey);
  t.same([other.status, other.body], [409, REUSED]);

  const txn = unique('txn');
  t.equal(
    (await post('sale', { transaction_id: txn, amount_cents: 10000, click_id: clickId }, unique('k'))).status,
    200,
  );
  const refundKey = unique('refund-key');
  const partial = await post('refund', { transaction_id: txn, refund_amount_cents: 1000 }, refundKey);
  t.match(partial, { status: 200, body: { status: 'refunded' } });
  t.same(
    (await post('refund', { transaction_id: txn, refund_amount_cents: 1000 }, refundKey)).body,
    partial.body,
  );
  const full = await post('refund', { transaction_id: txn }, refundKey);
  t.same([full.status, full.body], [409, REUSED], 'a full refund under the partial refund’s key');
  const [c] = await sql<{ status: string; deducted_cents: string }[]>`
    select c.status, c.deducted_cents from commissions c join sales s on s.id = c.sale_id
    where s.transaction_id = ${txn}`;
  t.same(c, { status: 'refunded', deducted_cents: '300' }, 'only the first refund was applied');
});

t.test('two different bodies under one key at once: one is applied, the other refused', async (t) => {
  const clickId = await click();
  for (let round = 0; round < 5; round++) {
    const key = unique('race-key');
    const a = { transaction_id: unique('race-a'), amount_cents: 1000, click_id: clickId };
    const b = { transaction_id: unique('race-b'), amount_cents: 2000, click_id: clickId };
    const [ra, rb] = await Promise.all([post('sale', a, key), post('sale', b, key)]);
    t.same([ra.status, rb.status].sort(), [200, 409], `round ${round}: one 200, one 409`);
    const refused = ra.status === 409 ? ra : rb;
    t.same(refused.body, REUSED);
    const recorded = await salesOf([a.transaction_id, b.transaction_id]);
    t.same(recorded, [(ra.status === 200 ? a : b).transaction_id], `round ${round}: only the answered sale`);
  }
});
