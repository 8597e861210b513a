// Attribution by a processor's discount (CONTRACT part three "Codes as well as links"; docs/codes.md) through
// the real intake and processor worker: a sale event carrying a partner code's discount — Stripe's
// `discounts[].promotion_code`, Paddle's `discount_id`, Polar's `discount_id` or `discount.code`, and
// `svc_coupon_code` in the custom data (Lemon Squeezy's only way) — is the code partner's, with no click and
// no customer key (the processor's customer becomes theirs); a discount no code names attributes nothing;
// under `fallback` a click's customer stays with the click's partner, under `override` the code takes it.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createLink, createProgram, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { processorProgram } from '../helpers/processor-stack.ts';
import {
  lsEvent,
  lsOrder,
  lsSignature,
  paddleEvent,
  paddleSignature,
  paddleTransaction,
  polarEvent,
  polarHeaders,
  polarOrder,
} from '../helpers/processors.ts';
import { checkoutSession, signature, stripeEvent } from '../helpers/stripe.ts';
import type { Sql } from '../../shared/db/sql.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'processor-worker', 'ledger-worker']);
const uniq = () => randomBytes(4).toString('hex');

/** A partner of the program with an active code (`processor_ids` optional), made as the API makes one. */
async function codePartner(db: Sql, programId: number, processorIds: Record<string, string> = {}) {
  const link = await createLink(db, programId);
  const code = `Pod${uniq()}`;
  await db`
    insert into partner_codes (program_id, partner_id, partner_program_id, code, processor_ids)
    values (${programId}, ${link.partnerId}, ${link.partnerProgramId}, ${code}, ${db.json(processorIds)})`;
  return { partnerId: link.partnerId, code };
}

interface Attributed {
  outcome: string;
  partner_id: number | null;
  amount_cents: number | null;
  coupon_code: string | null;
}
/** The event's outcome, and its sale's commission partner and coupon_code. */
function outcome(programId: number, processor: string, eventId: string): Promise<Attributed> {
  return waitFor(
    `outcome of ${processor} ${eventId}`,
    async () => {
      const [r] = await sql<Attributed[]>`
        select pe.outcome, c.partner_id::int as partner_id, c.amount_cents::int as amount_cents, s.coupon_code
        from processor_events pe
        left join sales s on s.program_id = pe.program_id and s.transaction_id = pe.transaction_id
        left join commissions c on c.sale_id = s.id
        where pe.program_id = ${programId} and pe.processor = ${processor} and pe.event_id = ${eventId}`;
      return r ?? null;
    },
    60_000,
  );
}

t.test('Paddle: discount_id names the code; an unknown discount attributes nothing', async (t) => {
  const SECRET = 'pdl_ntfset_01codes_secret';
  const p = await processorProgram(sql, svc.baseUrl, 'paddle', SECRET);
  const partner = await codePartner(sql, p.program.id, { paddle: 'dsc_01codes' });
  const send = async (data: unknown) => {
    const event = paddleEvent('transaction.completed', data);
    const body = JSON.stringify(event);
    const res = await p.post(body, { 'paddle-signature': paddleSignature(body, SECRET) });
    t.equal(res.status, 200);
    return outcome(p.program.id, 'paddle', event.event_id);
  };
  t.match(await send(paddleTransaction({ grand_total: 5_000, discount_id: 'dsc_01codes' })), {
    outcome: 'attributed',
    partner_id: partner.partnerId,
    amount_cents: 500,
    coupon_code: partner.code,
  });
  const unknown = await send(paddleTransaction({ grand_total: 5_000, discount_id: 'dsc_01nobody' }));
  t.not(unknown.outcome, 'attributed', 'a discount no code names');
  t.equal(unknown.partner_id, null, 'no commission');
});

t.test('Polar: discount_id or, failing it, discount.code names the code', async (t) => {
  const SECRET = 'whsec_' + Buffer.from('polar-codes-secret-0123456789').toString('base64');
  const p = await processorProgram(sql, svc.baseUrl, 'polar', SECRET);
  const byId = await codePartner(sql, p.program.id, { polar: crypto.randomUUID() });
  const byCode = await codePartner(sql, p.program.id);
  const send = async (data: unknown) => {
    const body = JSON.stringify(polarEvent('order.paid', data));
    const headers = polarHeaders(body, SECRET);
    t.equal((await p.post(body, headers)).status, 200);
    return outcome(p.program.id, 'polar', headers['webhook-id']!);
  };
  const polarId = (
    await sql<
      { id: string }[]
    >`select processor_ids->>'polar' as id from partner_codes where partner_id = ${byId.partnerId}`
  )[0]!.id;
  t.match(await send(polarOrder({ net_amount: 2_000, discount: { id: polarId, code: null } })), {
    outcome: 'attributed',
    partner_id: byId.partnerId,
    amount_cents: 200,
  });
  t.match(
    await send(
      polarOrder({
        net_amount: 3_000,
        discount: { id: crypto.randomUUID(), code: byCode.code.toLowerCase() },
      }),
    ),
    { outcome: 'attributed', partner_id: byCode.partnerId, amount_cents: 300, coupon_code: byCode.code },
    'the code typed in another case',
  );
});

t.test("Lemon Squeezy: svc_coupon_code in the checkout's custom data", async (t) => {
  const SECRET = 'ls-codes-secret';
  const p = await processorProgram(sql, svc.baseUrl, 'lemonsqueezy', SECRET);
  const partner = await codePartner(sql, p.program.id);
  const event = lsEvent('order_created', lsOrder({ total: 4_000 }), {
    custom_data: { svc_coupon_code: partner.code },
  });
  const body = JSON.stringify(event);
  t.equal((await p.post(body, { 'x-signature': lsSignature(body, SECRET) })).status, 200);
  const [row] = await waitFor('the Lemon Squeezy outcome', async () => {
    const rows = await sql<{ event_id: string }[]>`
      select event_id from processor_events where program_id = ${p.program.id} and processor = 'lemonsqueezy'`;
    return rows.length > 0 ? rows : null;
  });
  t.match(await outcome(p.program.id, 'lemonsqueezy', row!.event_id), {
    outcome: 'attributed',
    partner_id: partner.partnerId,
    amount_cents: 400,
    coupon_code: partner.code,
  });
});

t.test("Stripe: a checkout's promotion_code id names the code", async (t) => {
  const SECRET = 'whsec_codes_stripe_1';
  const program = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 10 })} where id = ${program.id}`;
  await sql`
    insert into processor_connections (workspace_id, status, webhook_secret)
    select workspace_id, 'connected', ${SECRET} from programs where id = ${program.id}`;
  const partner = await codePartner(sql, program.id, { stripe: 'promo_codes1' });
  const session = {
    ...checkoutSession({ amount_total: 6_000 }),
    discounts: [{ coupon: 'co_codes1', promotion_code: 'promo_codes1' }],
  };
  const event = stripeEvent('checkout.session.completed', session);
  const payload = JSON.stringify(event);
  const res = await fetch(`${svc.baseUrl}/api/v1/webhooks/stripe/${program.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature(payload, SECRET) },
    body: payload,
  });
  t.equal(res.status, 200);
  t.match(await outcome(program.id, 'stripe', event.id), {
    outcome: 'attributed',
    partner_id: partner.partnerId,
    amount_cents: 600,
    coupon_code: partner.code,
  });
});

t.test(
  "fallback keeps a click's customer with its partner; override gives the sale to the code",
  async (t) => {
    const SECRET = 'pdl_ntfset_01codes_modes';
    for (const mode of ['fallback', 'override'] as const) {
      const p = await processorProgram(sql, svc.baseUrl, 'paddle', SECRET);
      await sql`update programs set code_attribution = ${mode} where id = ${p.program.id}`;
      const [clicked] = await sql<{ partner_id: string }[]>`
      select partner_id from referral_links where program_id = ${p.program.id}`;
      const coder = await codePartner(sql, p.program.id, { paddle: `dsc_01${mode}` });
      const key = `codes-${mode}-${uniq()}`;
      await p.customer(key);
      const event = paddleEvent(
        'transaction.completed',
        paddleTransaction({
          grand_total: 8_000,
          discount_id: `dsc_01${mode}`,
          custom_data: { svc_customer_key: key },
        }),
      );
      const body = JSON.stringify(event);
      t.equal((await p.post(body, { 'paddle-signature': paddleSignature(body, SECRET) })).status, 200);
      const r = await outcome(p.program.id, 'paddle', event.event_id);
      t.match(r, { outcome: 'attributed', amount_cents: 800 }, mode);
      t.equal(r.partner_id, mode === 'fallback' ? Number(clicked!.partner_id) : coder.partnerId, mode);
    }
  },
);
