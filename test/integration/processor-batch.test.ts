// The processor worker's set-based form (applyBatch) against its per-event form (`apply` on each event in
// order), on the real database: a chunk of events that their payloads alone decide (checkouts and invoices
// naming their customer, both invoice events of one invoice, test mode, a program mismatch, no metadata, an
// unknown customer, another currency, an ignored type, a sale that releases a refund waiting for it) must get
// the same answers, effects and rows either way, and go through the sale applier's set-based form; a chunk
// with a refund or a subscription link is applied event by event, with the same result. Each run is
// rolled back, so both start from the same committed fixtures.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { Tx } from '../../shared/db/sql.ts';
import type { SaleCommand } from '../../shared/contracts/commands.ts';
import { processorRequestId } from '../../shared/contracts/processor-events.ts';
import type { ProcessorEventCommand } from '../../shared/contracts/processor-events.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../shared/pipeline/command-handler.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';
import { createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import { createRefundApplier } from '../../services/workers/reversal/apply-refund.ts';
import { createProcessorEventApplier } from '../../services/workers/processor/apply-event.ts';
import { createLink, createProgram, testSql } from '../helpers/stack.ts';
import { charge, checkoutSession, invoice, stripeEvent } from '../helpers/stripe.ts';

const sql = testSql(t);
const run = randomBytes(4).toString('hex');
const ROLLBACK = new Error('rollback');
const T0 = Date.now() - 60_000;

const program = (await createProgram(sql, { cookieWindowDays: 30 })).id;
const other = (await createProgram(sql)).id;
await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 10 })} where id = ${program}`;
const link = await createLink(sql, program);
const keys = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'].map((k) => `${run}-${k}`);
for (const key of keys)
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, customer_status, customer_key,
                           first_click_at, last_click_at)
    values (${program}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, 'click', ${key},
            ${new Date(T0 - 86_400_000)}, ${new Date(T0 - 86_400_000)})`;

let seq = 0;
function event(type: string, object: Record<string, unknown>, opts: { livemode?: boolean } = {}) {
  const e = stripeEvent(type, object, { ...opts, id: `evt_${run}_${++seq}` });
  const cmd: ProcessorEventCommand = {
    v: 1,
    type: 'processor_event',
    request_id: processorRequestId(program, e.id),
    ts: T0 + seq * 1000,
    program_id: program,
    event_id: e.id,
    event_type: type,
    livemode: e.livemode,
    payload: JSON.stringify(e, null, 2),
  };
  return cmd;
}
const checkout = (key: string | null, o: Parameters<typeof checkoutSession>[0] = {}) =>
  event(
    'checkout.session.completed',
    checkoutSession({ ...o, metadata: { ...(key ? { svc_customer_key: key } : {}), ...o.metadata } }),
  );

// A refund that arrived before its checkout: committed as waiting, released by chunk 1's checkout of pi_w.
const piWaiting = `pi_${run}_w`;
const early = event(
  'charge.refunded',
  charge({ payment_intent: piWaiting, amount: 5000, amount_refunded: 2000 }),
);
await sql`
  insert into processor_events (program_id, event_id, type, livemode, received_at, outcome, reason, waiting_for, payload)
  values (${program}, ${early.event_id}, ${early.event_type}, true, ${new Date(early.ts)}, 'waiting', 'sale',
          ${`payment:${piWaiting}`}, ${early.payload}::text::jsonb)`;

const sub = `sub_${run}`;
const inv = invoice({ subscription: sub, metadata: { svc_customer_key: keys[2]! }, amount_paid: 2900 });
const quick: ProcessorEventCommand[] = [
  checkout(keys[0]!, { amount_total: 4900 }),
  checkout(keys[1]!, { amount_total: 1200 }),
  event('invoice.paid', inv),
  event('invoice.payment_succeeded', inv), // the same invoice: one sale
  checkout(keys[3]!, {}),
  event('checkout.session.completed', checkoutSession({ metadata: { svc_customer_key: keys[3]! } }), {
    livemode: false,
  }),
  checkout(keys[4]!, { metadata: { program_id: String(other) } }),
  checkout(null),
  checkout(`${run}-nobody`),
  checkout(keys[4]!, { currency: 'eur' }),
  event('customer.created', { id: `cus_${run}`, object: 'customer' }),
  checkout(keys[5]!, { payment_intent: piWaiting, amount_total: 5000 }),
  checkout(keys[0]!, { amount_total: 700 }), // the same customer's second sale in the chunk
];
const pi1 = `pi_${run}_1`;
const mixed: ProcessorEventCommand[] = [
  checkout(keys[0]!, { payment_intent: pi1, amount_total: 3000 }),
  event('charge.refunded', charge({ payment_intent: pi1, amount: 3000, amount_refunded: 3000 })),
  event(
    'checkout.session.completed',
    checkoutSession({
      mode: 'subscription',
      subscription: `sub_${run}_2`,
      metadata: { svc_customer_key: keys[1]! },
    }),
  ),
  checkout(keys[2]!, { amount_total: 800 }),
];

/** Answers and rows of one run, every sale and commission id replaced by its sale's transaction_id. */
async function capture(tx: Tx, answers: Applied[]) {
  const sales = await tx<Record<string, unknown>[]>`
    select id, transaction_id, customer_id, partner_id, amount_cents, currency, sale_type, is_recurring,
           subscription_id, is_test, sale_date
    from sales where program_id = ${program} order by id`;
  const commissions = await tx<Record<string, unknown>[]>`
    select c.id, s.transaction_id as sale, c.partner_id, c.status, c.amount_cents, c.deducted_cents
    from commissions c join sales s on s.id = c.sale_id where c.program_id = ${program} order by c.id`;
  const saleTxn = new Map(sales.map((s) => [String(s.id), s.transaction_id]));
  const comTxn = new Map(commissions.map((c) => [String(c.id), c.sale]));
  const sid = (v: unknown) => (v === null ? null : `sale<${saleTxn.get(String(v)) ?? `?${String(v)}`}>`);
  const cid = (v: unknown) => (v === null ? null : `commission<${comTxn.get(String(v)) ?? `?${String(v)}`}>`);
  const events = await tx<Record<string, unknown>[]>`
    select event_id, outcome, reason, transaction_id, sale_id, commission_id, waiting_for
    from processor_events where program_id = ${program} order by event_id`;
  const rollups = await tx<Record<string, unknown>[]>`
    select day::text, conversions, sales, revenue_cents, commission_cents
    from program_daily_stats where program_id = ${program} order by day`;
  const effects = answers.flatMap((a) => a.effects ?? []);
  return {
    answers: answers.map((a) => ({ programId: a.programId, statusCode: a.statusCode, body: a.body })),
    // Which event carries a released refund's effects differs by form; the set of effects must not.
    effects: effects
      .map((e) =>
        // A commission id as its sale's transaction_id, wherever the effect names it.
        JSON.stringify(e)
          .replace(/"commission_id":(\d+)/g, (_, id: string) => `"commission_id":"${cid(Number(id))}"`)
          .replace(/"entry_key":"[^"]*"/, '"entry_key":""')
          .replace(/commission:(\d+):/g, (_, id: string) => `${cid(Number(id))}:`),
      )
      .sort(),
    events: events.map((e): Record<string, unknown> => ({
      ...e,
      sale_id: sid(e.sale_id),
      commission_id: cid(e.commission_id),
    })),
    sales: sales.map(({ id: _id, ...s }) => s),
    commissions: commissions.map(({ id: _id, ...c }) => c),
    rollups: rollups.map((r) => ({ ...r })),
  };
}

type Mode = (tx: Tx, cmds: ProcessorEventCommand[], ctx: ApplyContext) => Promise<Applied[]>;

async function runChunk(cmds: ProcessorEventCommand[], mode: Mode) {
  let out: Awaited<ReturnType<typeof capture>> | undefined;
  await sql
    .begin(async (tx) => {
      const ctx: ApplyContext = { rollups: new RollupBuffer(), careful: false, memo: new Map() };
      const answers = await mode(tx, cmds, ctx);
      await ctx.rollups.flush(tx);
      out = await capture(tx, answers);
      throw ROLLBACK;
    })
    .catch((err: unknown) => {
      if (err !== ROLLBACK) throw err;
    });
  return out!;
}

/** The sale applier, counting the commands its set-based form was given. */
function countingSaleApplier(): { applier: CommandApplier<SaleCommand>; batched: number[] } {
  const inner = createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: 'test.' });
  const batched: number[] = [];
  return {
    batched,
    applier: {
      ...inner,
      applyBatch: (tx, cmds, ctx) => {
        batched.push(cmds.length);
        return inner.applyBatch!(tx, cmds, ctx);
      },
    },
  };
}

for (const [name, cmds, setBased] of [
  ['events their payloads decide', quick, true],
  ['a chunk with a refund and a subscription link', mixed, false],
] as const) {
  t.test(`${name}: applyBatch answers and writes what apply on each event does`, async (t) => {
    const counting = countingSaleApplier();
    const batchForm = createProcessorEventApplier(
      counting.applier,
      createRefundApplier({ kafkaPrefix: 'test.' }),
    );
    const eventForm = createProcessorEventApplier(
      createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: 'test.' }),
      createRefundApplier({ kafkaPrefix: 'test.' }),
    );
    const batch = await runChunk(cmds, (tx, c, ctx) => batchForm.applyBatch!(tx, c, ctx));
    const each = await runChunk(cmds, async (tx, c, ctx) => {
      const out: Applied[] = [];
      for (const cmd of c) out.push(await eventForm.apply(tx, cmd, ctx));
      return out;
    });
    t.same(batch, each, 'same answers, effects, outcomes, sales, commissions and rollups');
    if (setBased)
      t.same(counting.batched, [quick.length - 3], 'its sales went through the set-based form once');
    else t.same(counting.batched, [], 'applied event by event');
    const outcomes = each.answers.map((a) => `${String(a.body.outcome)}:${String(a.body.reason)}`).sort();
    t.comment(`outcomes: ${outcomes.join(', ')}`);
    if (setBased) {
      // Not vacuous: every branch the chunk was built for is there.
      for (const o of [
        'attributed:null',
        'ignored:already_recorded',
        'recorded:test_mode',
        'unattributed:program_mismatch',
        'unattributed:no_metadata',
        'unattributed:customer_not_found',
        'unattributed:currency_mismatch',
      ])
        t.ok(outcomes.includes(o), o);
      t.ok(
        each.events.some((e) => e.event_id === early.event_id && e.outcome === 'refund_applied'),
        'the waiting refund was released and applied',
      );
    }
  });
}
