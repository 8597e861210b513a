// Processor events end to end: signed Stripe events through the intake, applied by the processor worker
// with the sale and refund code of /track/sale and /track/refund, exactly once, whatever the order and
// however often they are delivered; every event's outcome readable in processor_events.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import {
  charge,
  checkoutSession,
  invoice,
  invoicePayment,
  signature,
  stripeEvent,
} from '../helpers/stripe.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'processor-worker', 'ledger-worker']);
const SECRET = 'whsec_processor_events_test';
const program = await createProgram(sql);
await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 10 })} where id = ${program.id}`;
await sql`
  insert into processor_connections (workspace_id, status, webhook_secret)
  select workspace_id, 'connected', ${SECRET} from programs where id = ${program.id}`;
const link = await createLink(sql, program.id);

/** A customer with `key`, made the way an integrator makes one: a click, then a lead. */
async function customer(key: string): Promise<string> {
  const c = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
  });
  const clickId = c.body.click_id as string;
  const l = await postJson(`${svc.baseUrl}/api/v1/track/lead`, { click_id: clickId, customer_key: key });
  if (l.status !== 200) throw new Error(`lead failed: ${JSON.stringify(l.body)}`);
  return clickId;
}

async function send(
  type: string,
  object: Record<string, unknown>,
  opts: { id?: string; livemode?: boolean } = {},
) {
  const event = stripeEvent(type, object, opts);
  const payload = JSON.stringify(event, null, 2);
  const res = await fetch(`${svc.baseUrl}/api/v1/webhooks/processor/${program.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature(payload, SECRET) },
    body: payload,
  });
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${await res.text()}`);
  return event;
}

interface Row {
  outcome: string;
  reason: string | null;
  transaction_id: string | null;
  sale_id: string | null;
  commission_id: string | null;
}
const outcomeOf = (eventId: string, not = 'none') =>
  waitFor(
    `outcome of ${eventId}`,
    async () => {
      const [r] = await sql<Row[]>`
      select outcome, reason, transaction_id, sale_id, commission_id from processor_events
      where program_id = ${program.id} and event_id = ${eventId}`;
      return r && r.outcome !== not ? r : null;
    },
    60_000,
  );

const salesOf = (txn: string) =>
  sql<{ id: string; amount_cents: string; is_test: boolean; is_recurring: boolean; sale_type: string }[]>`
    select id, amount_cents, is_test, is_recurring, sale_type from sales where transaction_id = ${txn}`;

t.test(
  'a paid checkout: one sale with its commission; redelivered ten times at once, still one',
  async (t) => {
    await customer('buyer-1');
    const session = checkoutSession({ amount_total: 5000, metadata: { svc_customer_key: 'buyer-1' } });
    const event = await send('checkout.session.completed', session);
    const row = await outcomeOf(event.id);
    t.match(row, { outcome: 'attributed', transaction_id: session.payment_intent });
    t.ok(row.commission_id, 'a commission');
    const [c] = await sql`select amount_cents::int as a from commissions where id = ${row.commission_id}`;
    t.equal(c!.a, 500, '10% of 50.00');
    // The same event id again, ten deliveries concurrently: no second effect.
    const payload = JSON.stringify(event);
    const copies = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${svc.baseUrl}/api/v1/webhooks/processor/${program.id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature(payload, SECRET) },
          body: payload,
        }).then((r) => r.status),
      ),
    );
    t.same(copies, Array(10).fill(200));
    // Behind the copies on their partition (same key): once it has an outcome, so have they.
    const marker = await send('checkout.session.completed', {
      ...checkoutSession({ payment_intent: session.payment_intent }),
      mode: 'setup',
    });
    t.match(await outcomeOf(marker.id), { outcome: 'ignored', reason: 'mode_setup' });
    t.equal((await salesOf(session.payment_intent!)).length, 1, 'one sale');
    const [n] = await sql`select count(*)::int as n from processor_events where event_id = ${event.id}`;
    t.equal(n!.n, 1, 'one outcome row');
    await waitFor('the credit on the ledger', async () => {
      const [l] =
        await sql`select count(*)::int as n from ledger_entries where commission_id = ${row.commission_id}`;
      return l!.n === 1;
    });
  },
);

t.test('a refund before its checkout waits, then is applied when the checkout arrives', async (t) => {
  await customer('buyer-2');
  const session = checkoutSession({ amount_total: 8000, metadata: { svc_customer_key: 'buyer-2' } });
  const ch = charge({ amount: 8000, amount_refunded: 2000, payment_intent: session.payment_intent });
  const refundEvent = await send('charge.refunded', ch);
  t.match(await outcomeOf(refundEvent.id), { outcome: 'waiting', reason: 'sale' });
  const checkout = await send('checkout.session.completed', session);
  t.match(await outcomeOf(checkout.id), { outcome: 'attributed' });
  const r = await outcomeOf(refundEvent.id, 'waiting');
  t.match(r, { outcome: 'refund_applied', reason: 'refunded', transaction_id: session.payment_intent });
  const [c] = await sql`select status, amount_cents::int as a from commissions where id = ${r.commission_id}`;
  t.equal(c!.status, 'refunded', 'partial refund: the commission is refunded, not reversed');
});

t.test(
  'subscription: the checkout links it; invoices attribute through the link, once per invoice',
  async (t) => {
    await customer('subscriber-1');
    const sub = `sub_${Date.now()}`;
    const renewalFirst = invoice({
      subscription: sub,
      billing_reason: 'subscription_cycle',
      amount_paid: 1500,
    });
    const early = await send('invoice.paid', renewalFirst);
    t.match(await outcomeOf(early.id), { outcome: 'waiting', reason: 'subscription_link' });
    const checkout = await send(
      'checkout.session.completed',
      checkoutSession({
        mode: 'subscription',
        subscription: sub,
        metadata: { svc_customer_key: 'subscriber-1' },
      }),
    );
    t.match(await outcomeOf(checkout.id), { outcome: 'linked' });
    t.match(await outcomeOf(early.id, 'waiting'), { outcome: 'attributed', transaction_id: renewalFirst.id });
    // Stripe sends both events for one invoice: one sale.
    const first = invoice({ layout: 'legacy', subscription: sub, billing_reason: 'subscription_create' });
    const a = await send('invoice.paid', first);
    const b = await send('invoice.payment_succeeded', first);
    t.match(await outcomeOf(a.id), { outcome: 'attributed' });
    t.match(await outcomeOf(b.id), { outcome: 'ignored', reason: 'already_recorded' });
    const [s] = await salesOf(first.id);
    t.match(s, { sale_type: 'subscription', is_recurring: false });
    t.match((await salesOf(renewalFirst.id))[0], { is_recurring: true });
  },
);

t.test('a 2025+ invoice refund finds its sale through invoice_payment.paid', async (t) => {
  await customer('subscriber-2');
  const sub = `sub_b_${Date.now()}`;
  await send(
    'checkout.session.completed',
    checkoutSession({
      mode: 'subscription',
      subscription: sub,
      metadata: { svc_customer_key: 'subscriber-2' },
    }),
  );
  const inv = invoice({ subscription: sub, billing_reason: 'subscription_create', amount_paid: 3000 });
  t.match(await outcomeOf((await send('invoice.paid', inv)).id), { outcome: 'attributed' });
  const pi = `pi_inv_${Date.now()}`;
  const refund = await send('charge.refunded', charge({ amount: 3000, payment_intent: pi }));
  t.match(await outcomeOf(refund.id), { outcome: 'waiting' });
  await send('invoice_payment.paid', invoicePayment({ invoice: inv.id, payment_intent: pi }));
  t.match(await outcomeOf(refund.id, 'waiting'), { outcome: 'refund_applied', reason: 'reversed' });
});

t.test('test mode, no metadata, another program: recorded or unattributed, never paid', async (t) => {
  await customer('tester');
  const testSession = checkoutSession({ metadata: { svc_customer_key: 'tester' } });
  const e1 = await send('checkout.session.completed', testSession, { livemode: false });
  t.match(await outcomeOf(e1.id), { outcome: 'recorded', reason: 'test_mode' });
  const [s] = await salesOf(testSession.payment_intent!);
  t.equal(s?.is_test, true, 'a test sale');
  const [c] = await sql`select count(*)::int as n from commissions where sale_id = ${s!.id}`;
  t.equal(c!.n, 0, 'no commission');
  const e2 = await send('checkout.session.completed', checkoutSession({}));
  t.match(await outcomeOf(e2.id), { outcome: 'unattributed', reason: 'no_metadata' });
  const e3 = await send(
    'checkout.session.completed',
    checkoutSession({ metadata: { svc_customer_key: 'tester', program_id: String(program.id + 1000) } }),
  );
  t.match(await outcomeOf(e3.id), { outcome: 'unattributed', reason: 'program_mismatch' });
  const e4 = await send(
    'checkout.session.completed',
    checkoutSession({ metadata: { svc_customer_key: 'nobody' } }),
  );
  t.match(await outcomeOf(e4.id), { outcome: 'unattributed', reason: 'customer_not_found' });
  const e5 = await send('customer.subscription.updated', { id: 'sub_x', object: 'subscription' });
  t.match(await outcomeOf(e5.id), { outcome: 'ignored', reason: 'unhandled_type' });
});

t.test('the advertiser reads every event and its outcome, newest first, filtered and paged', async (t) => {
  const owner = await signup(svc);
  await sql`insert into memberships (user_id, workspace_id, role)
            select ${owner.userId}, workspace_id, 'viewer' from programs where id = ${program.id}`;
  const list = (q: string) =>
    getJson(
      `${svc.baseUrl}/api/advertiser/processor-events?program_id=${program.id}${q}`,
      bearer(owner.session),
    );
  const all = await list('&pageSize=100');
  t.equal(all.status, 200);
  const data = all.body.data as { event_id: string; outcome: string; received_at: string }[];
  const [n] = await sql`select count(*)::int as n from processor_events where program_id = ${program.id}`;
  t.equal(data.length, n!.n, 'every event');
  t.match(all.body.meta, { pagination: { page: 1, pageSize: 100, total: n!.n } });
  const times = data.map((d) => d.received_at);
  t.same(times, [...times].sort().reverse(), 'newest first');
  const refunds = await list('&outcome=refund_applied');
  t.ok((refunds.body.data as { outcome: string }[]).every((d) => d.outcome === 'refund_applied'));
  t.ok((refunds.body.data as unknown[]).length >= 2, 'filtered by outcome');
  const page2 = await list('&pageSize=2&page=2');
  t.same(
    (page2.body.data as { event_id: string }[]).map((d) => d.event_id),
    data.slice(2, 4).map((d) => d.event_id),
    'paged',
  );
  t.same((await list('&outcome=nope')).body, {
    error:
      'outcome must be one of attributed, recorded, unattributed, refund_applied, linked, waiting, ignored, failed',
  });
  t.same((await list('&pageSize=101')).body, { error: 'pageSize must be an integer between 1 and 100' });
  const stranger = await signup(svc);
  const other = await getJson(
    `${svc.baseUrl}/api/advertiser/processor-events?program_id=${program.id}`,
    bearer(stranger.session),
  );
  t.same(other, { status: 404, body: { error: 'Program not found' }, text: '{"error":"Program not found"}' });
});
