// kill -9 of the processor worker while signed Stripe events (checkouts, their refunds, redeliveries) pour
// in: every event answered 200 is applied exactly once: one outcome per event id, one sale per checkout,
// one commission per sale, one reversal per refunded commission, balances equal to their ledger sums.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { charge, checkoutSession, signature, stripeEvent } from '../helpers/stripe.ts';

const sql = testSql(t);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('kill -9 of the processor worker mid-load: every accepted event applied once', async (t) => {
  const svc = await startServices(t, ['web', 'click-worker', 'processor-worker', 'ledger-worker']);
  const SECRET = 'whsec_processor_crash';
  const program = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 20 })} where id = ${program.id}`;
  await sql`
    insert into processor_connections (workspace_id, status, webhook_secret)
    select workspace_id, 'connected', ${SECRET} from programs where id = ${program.id}`;
  const link = await createLink(sql, program.id);
  const keys: string[] = [];
  for (let i = 0; i < 20; i++) {
    const c = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
      affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
    });
    const key = `crash-buyer-${program.id}-${i}`;
    const l = await postJson(`${svc.baseUrl}/api/v1/track/lead`, {
      click_id: c.body.click_id,
      customer_key: key,
    });
    if (l.status !== 200) throw new Error(`lead: ${JSON.stringify(l.body)}`);
    keys.push(key);
  }

  const accepted = new Map<string, { type: string; pi: string }>();
  const checkouts: { pi: string; amount: number }[] = [];
  const refunded = new Set<string>();
  const deliver = async (event: ReturnType<typeof stripeEvent>, pi: string) => {
    const payload = JSON.stringify(event);
    for (;;) {
      try {
        const r = await fetch(`${svc.baseUrl}/api/v1/webhooks/processor/${program.id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature(payload, SECRET) },
          body: payload,
        });
        if (r.status === 200) {
          accepted.set(event.id, { type: event.type, pi });
          return;
        }
      } catch {
        // the web process is not killed here; a network blip is retried as Stripe would
      }
      await sleep(200);
    }
  };

  // The load is bounded by counts, not time: while the worker is down the web keeps accepting (Stripe has
  // its 200 once the event is in Kafka), ~600 checkouts a second here, more on a faster machine, and an
  // unbounded backlog made the wait for its outcomes depend on the machine. Each phase may run 300
  // checkouts ahead; the load ends 30 checkouts after the second restart.
  const AHEAD = 300;
  let allowance = AHEAD;
  let endAt = Infinity;
  let seq = 0;
  const hardEnd = Date.now() + 120_000;
  const loop = async () => {
    while (checkouts.length < endAt && Date.now() < hardEnd) {
      if (checkouts.length >= allowance) {
        await sleep(50);
        continue;
      }
      const n = ++seq;
      const amount = 1000 + (n % 5) * 250;
      const session = checkoutSession({
        amount_total: amount,
        metadata: { svc_customer_key: keys[n % keys.length]! },
      });
      const pi = session.payment_intent!;
      const event = stripeEvent('checkout.session.completed', session);
      await deliver(event, pi);
      checkouts.push({ pi, amount });
      if (n % 4 === 0) await deliver(event, pi); // Stripe redelivers
      if (n % 3 === 0) {
        const partial = n % 2 === 0 ? amount : 400;
        await deliver(
          stripeEvent('charge.refunded', charge({ amount, amount_refunded: partial, payment_intent: pi })),
          pi,
        );
        refunded.add(pi);
      }
    }
  };
  const began = Date.now();
  const at = () => `${((Date.now() - began) / 1000).toFixed(1)} s`;
  const applied = async () =>
    (await sql`select count(*)::int as n from processor_events where program_id = ${program.id}`)[0]!
      .n as number;
  const load = Promise.all([loop(), loop(), loop(), loop()]);
  await waitFor('15 checkouts accepted', async () => checkouts.length >= 15, 120_000, 50);
  for (const phase of ['first', 'second']) {
    const before = await applied();
    t.comment(`${at()}: ${checkouts.length} checkouts, ${before} events applied; kill -9 (${phase})`);
    await svc.kill('processor-worker');
    await sleep(300);
    await svc.start('processor-worker');
    allowance = checkouts.length + AHEAD;
    t.comment(`${at()}: ${checkouts.length} checkouts; restarted`);
    // The next kill (or the end of the load) once the new worker is applying: it interrupts its work.
    await waitFor(
      'the restarted worker applying events',
      async () => (await applied()) > before,
      120_000,
      50,
    );
  }
  endAt = checkouts.length + 30;
  allowance = Infinity;
  await load;
  t.comment(`${at()}: load done`);
  t.ok(
    checkouts.length >= endAt,
    `a load across both kills (${checkouts.length} checkouts, ${accepted.size} events)`,
  );

  const ids = [...accepted.keys()];
  const rows = await waitFor(
    `outcomes of all ${ids.length} accepted events`,
    async () => {
      const r = await sql<{ event_id: string; outcome: string }[]>`
        select event_id, outcome from processor_events
        where program_id = ${program.id} and event_id = any(${ids})`;
      const done = r.filter((e) => e.outcome !== 'waiting');
      if (done.length === ids.length) return done;
      // The state on a timeout: how far the worker got, and what waits.
      throw new Error(
        `${done.length} with outcomes, ${r.length - done.length} waiting, ${ids.length - r.length} not recorded`,
      );
    },
    120_000,
    250,
  );
  t.same(
    rows.filter((r) => !['attributed', 'refund_applied'].includes(r.outcome)).map((r) => r.outcome),
    [],
    'every checkout attributed, every refund applied',
  );
  const pis = checkouts.map((c) => c.pi);
  const [sales] = await sql`
    select count(*)::int as n, count(distinct transaction_id)::int as d from sales where transaction_id = any(${pis})`;
  t.same(sales, { n: pis.length, d: pis.length }, 'one sale per checkout');
  const [comm] = await sql`
    select count(*)::int as n, count(*) filter (where c.status in ('reversed', 'refunded'))::int as refunded
    from commissions c join sales s on s.id = c.sale_id where s.transaction_id = any(${pis})`;
  t.same(
    comm,
    { n: pis.length, refunded: refunded.size },
    'one commission per sale, one reversal per refund',
  );
  await waitFor(
    'ledger entries for every movement',
    async () => {
      const [l] = await sql`
      select count(*)::int as n from ledger_entries e join commissions c on c.id = e.commission_id
      join sales s on s.id = c.sale_id where s.transaction_id = any(${pis})`;
      return l!.n === pis.length + refunded.size;
    },
    60_000,
  );
  const [bal] = await sql`
    select pp.balance_cents::bigint = coalesce(sum(e.program_cents), 0) as ok
    from partner_programs pp left join ledger_entries e on e.partner_program_id = pp.id
    where pp.id = ${link.partnerProgramId} group by pp.id, pp.balance_cents`;
  t.equal(bal!.ok, true, 'the balance equals its ledger sum');
});
