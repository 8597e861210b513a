// Paddle Billing end to end: events signed as Paddle signs them (Paddle-Signature ts/h1) through the intake,
// applied by the processor worker with the /track/sale and /track/refund code; money and commissions to the
// cent; refunds only once approved; out of order, duplicated, badly signed.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { processorProgram } from '../helpers/processor-stack.ts';
import { paddleAdjustment, paddleEvent, paddleSignature, paddleTransaction } from '../helpers/processors.ts';
import { PADDLE_ERRORS } from '../../shared/processors/paddle.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'processor-worker', 'ledger-worker']);
const SECRET = 'pdl_ntfset_01integration_secret';
const { program, customer, outcomeOf, salesOf, commission, post } = await processorProgram(
  sql,
  svc.baseUrl,
  'paddle',
  SECRET,
);

async function send(type: string, data: unknown) {
  const event = paddleEvent(type, data);
  const body = JSON.stringify(event);
  const res = await post(body, { 'paddle-signature': paddleSignature(body, SECRET) });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { event, body };
}

t.test(
  'a one-time transaction: one sale, 10% of grand_total to the cent; a duplicate changes nothing',
  async (t) => {
    await customer('pd-buyer-1');
    const txn = paddleTransaction({
      grand_total: 11_999,
      tax: 2_000,
      custom_data: { svc_customer_key: 'pd-buyer-1' },
    });
    const { event, body } = await send('transaction.completed', txn);
    const row = await outcomeOf(event.event_id);
    t.match(row, { outcome: 'attributed', transaction_id: txn.id });
    t.match((await salesOf(txn.id))[0], { amount_cents: 11_999, sale_type: 'payment', is_recurring: false });
    t.match(
      await commission(row.commission_id),
      { status: 'pending', amount_cents: 1_200 },
      '10% of 119.99, rounded',
    );
    // The same event again (Paddle retries): 200, no second effect.
    const again = await post(body, { 'paddle-signature': paddleSignature(body, SECRET) });
    t.same(again, { status: 200, body: { received: true } });
    // A marker behind it on the same key: once it has an outcome, so has the copy.
    const marker = await send('transaction.completed', { ...txn, details: { totals: { grand_total: '0' } } });
    t.match(await outcomeOf(marker.event.event_id), { outcome: 'ignored', reason: 'zero_amount' });
    t.equal((await salesOf(txn.id)).length, 1, 'one sale');
    const [n] = await sql`select count(*)::int as n from processor_events where event_id = ${event.event_id}`;
    t.equal(n!.n, 1, 'one outcome row');
  },
);

t.test(
  'a subscription: the first payment links it, a renewal without custom data attributes through it',
  async (t) => {
    await customer('pd-sub-1');
    const sub = `sub_01pd${Date.now()}`;
    const renewal = paddleTransaction({
      grand_total: 2_500,
      subscription_id: sub,
      origin: 'subscription_recurring',
    });
    const early = await send('transaction.completed', renewal);
    t.match(await outcomeOf(early.event.event_id), { outcome: 'waiting', reason: 'subscription_link' });
    const first = paddleTransaction({
      grand_total: 2_500,
      subscription_id: sub,
      origin: 'web',
      custom_data: { svc_customer_key: 'pd-sub-1' },
    });
    const f = await send('transaction.completed', first);
    const firstRow = await outcomeOf(f.event.event_id);
    t.match(firstRow, { outcome: 'attributed' });
    t.match((await salesOf(first.id))[0], {
      sale_type: 'subscription',
      is_recurring: false,
      subscription_id: sub,
    });
    const r = await outcomeOf(early.event.event_id, 'waiting');
    t.match(r, { outcome: 'attributed', transaction_id: renewal.id }, 'the renewal waited, then attributed');
    t.match((await salesOf(renewal.id))[0], {
      amount_cents: 2_500,
      sale_type: 'subscription',
      is_recurring: true,
    });
    t.match(await commission(r.commission_id), { amount_cents: 250 });
  },
);

t.test('refunds: pending is nothing, approved partial deducts its share, full reverses', async (t) => {
  await customer('pd-refund-1');
  const txn = paddleTransaction({ grand_total: 10_000, custom_data: { svc_customer_key: 'pd-refund-1' } });
  const sale = await outcomeOf((await send('transaction.completed', txn)).event.event_id);
  t.match(await commission(sale.commission_id), { amount_cents: 1_000 });
  const adj = paddleAdjustment({ transaction_id: txn.id, total: 2_500, status: 'pending_approval' });
  const pending = await send('adjustment.created', adj);
  t.match(await outcomeOf(pending.event.event_id), { outcome: 'ignored', reason: 'refund_pending_approval' });
  t.match(await commission(sale.commission_id), { status: 'pending', deducted_cents: 0 }, 'nothing yet');
  const approved = await send('adjustment.updated', { ...adj, status: 'approved' });
  t.match(await outcomeOf(approved.event.event_id), { outcome: 'refund_applied', reason: 'refunded' });
  t.match(await commission(sale.commission_id), { status: 'refunded', deducted_cents: 250 }, '25% of 10.00');

  await customer('pd-refund-2');
  const txn2 = paddleTransaction({ grand_total: 4_000, custom_data: { svc_customer_key: 'pd-refund-2' } });
  const sale2 = await outcomeOf((await send('transaction.completed', txn2)).event.event_id);
  const full = await send(
    'adjustment.updated',
    paddleAdjustment({ transaction_id: txn2.id, total: 4_000, type: 'full' }),
  );
  t.match(await outcomeOf(full.event.event_id), { outcome: 'refund_applied', reason: 'reversed' });
  t.match(await commission(sale2.commission_id), { status: 'reversed', deducted_cents: 400 });
});

t.test('an approved refund before its transaction waits, then applies', async (t) => {
  await customer('pd-early');
  const txn = paddleTransaction({ grand_total: 6_000, custom_data: { svc_customer_key: 'pd-early' } });
  const refund = await send(
    'adjustment.updated',
    paddleAdjustment({ transaction_id: txn.id, total: 6_000, type: 'full' }),
  );
  t.match(await outcomeOf(refund.event.event_id), { outcome: 'waiting', reason: 'sale' });
  const sale = await outcomeOf((await send('transaction.completed', txn)).event.event_id);
  t.match(sale, { outcome: 'attributed' });
  t.match(await outcomeOf(refund.event.event_id, 'waiting'), {
    outcome: 'refund_applied',
    reason: 'reversed',
  });
  t.match(await commission(sale.commission_id), { status: 'reversed', deducted_cents: 600 });
});

t.test('refusals: missing, malformed, wrong, stale, rotated; unknown program', async (t) => {
  const body = JSON.stringify(paddleEvent('transaction.completed', paddleTransaction({ grand_total: 100 })));
  const bad = (status: number, error: string) => ({ status, body: { error } });
  t.same(await post(body, {}), bad(400, PADDLE_ERRORS.missingSignature));
  t.same(await post(body, { 'paddle-signature': 'v1=abc' }), bad(400, PADDLE_ERRORS.malformedSignature));
  t.same(
    await post(body, { 'paddle-signature': paddleSignature(body, 'pdl_ntfset_wrong') }),
    bad(400, PADDLE_ERRORS.badSignature),
  );
  const stale = paddleSignature(body, SECRET, Math.floor(Date.now() / 1000) - 301);
  t.same(await post(body, { 'paddle-signature': stale }), bad(400, PADDLE_ERRORS.stale));
  const rotating = paddleSignature(body, 'pdl_ntfset_next', undefined, [SECRET]);
  t.same(
    await post(body, { 'paddle-signature': rotating }),
    { status: 200, body: { received: true } },
    'rotation',
  );
  const ok = paddleSignature(body, SECRET);
  t.same(await post(body, { 'paddle-signature': ok }, 999_999_999), bad(404, PADDLE_ERRORS.programNotFound));
  const notEvent = JSON.stringify({ hello: 'world' });
  t.same(
    await post(notEvent, { 'paddle-signature': paddleSignature(notEvent, SECRET) }),
    bad(400, PADDLE_ERRORS.notEvent),
  );
  const res = await fetch(`${svc.baseUrl}/api/v1/webhooks/square/${program.id}`, { method: 'POST', body });
  t.equal(res.status, 404);
  t.match(await res.json(), { error: /^Unknown processor/ });
});
