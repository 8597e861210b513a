// Amounts of different currencies are never added together (ARCHITECTURE invariant 11): a sale is in its
// program's currency (an omitted currency means the program's), another currency is refused with a 400 on
// /track/sale, and a processor event in another currency is recorded unattributed (`currency_mismatch`).
// Either way nothing reaches the program's revenue rollups or a balance.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { checkoutSession, signature, stripeEvent } from '../helpers/stripe.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker', 'processor-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const SECRET = 'whsec_currency_test';
let n = 0;
const txn = () => `cur-${Date.now()}-${++n}`;

async function program(currency: string) {
  const p = await createProgram(sql);
  await sql`update programs set currency = ${currency}, commission = ${sql.json({ type: 'percentage', percent: 10 })}
            where id = ${p.id}`;
  const link = await createLink(sql, p.id);
  return { ...p, link };
}

async function click(shortLink: string): Promise<string> {
  const r = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${shortLink}`,
  });
  if (r.status !== 200) throw new Error(`click failed: ${JSON.stringify(r.body)}`);
  return r.body.click_id as string;
}

const sale = (token: string, body: Record<string, unknown>) =>
  postJson(url('/api/v1/track/sale'), body, { authorization: `Bearer ${token}` });

async function revenue(programId: number): Promise<number> {
  const [r] = await sql<{ v: string }[]>`
    select coalesce(sum(revenue_cents), 0)::text as v from program_daily_stats where program_id = ${programId}`;
  return Number(r!.v);
}

t.test('/track/sale: another currency than the program’s is a 400 and records nothing', async (t) => {
  const usd = await program('USD');
  const clickId = await click(usd.link.shortLink);
  const ok = await sale(usd.token, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
  t.equal(ok.status, 200, JSON.stringify(ok.body));
  const before = await revenue(usd.id);
  t.equal(before, 1000);
  const eurTxn = txn();
  const eur = await sale(usd.token, {
    transaction_id: eurTxn,
    amount_cents: 5000,
    click_id: clickId,
    currency: 'EUR',
  });
  t.same([eur.status, eur.body], [400, { error: "currency must be the program's currency (USD)" }]);
  const [s] = await sql`select count(*)::int as n from sales where transaction_id = ${eurTxn}`;
  t.equal(s!.n, 0, 'no sale, the transaction_id stays free');
  t.equal(await revenue(usd.id), before, 'revenue unchanged: no euros added to dollars');
  const lower = await sale(usd.token, {
    transaction_id: txn(),
    amount_cents: 1,
    click_id: clickId,
    currency: 'usd',
  });
  t.equal(lower.status, 200, 'the program’s currency in any case is fine');
});

t.test('/track/sale: an omitted currency is the program’s currency', async (t) => {
  const eur = await program('EUR');
  const clickId = await click(eur.link.shortLink);
  const r = await sale(eur.token, { transaction_id: txn(), amount_cents: 2000, click_id: clickId });
  t.equal(r.status, 200, JSON.stringify(r.body));
  const [s] = await sql`select currency from sales where id = ${r.body.sale_id as number}`;
  t.equal(s!.currency, 'EUR');
  const [c] = await sql`select currency from commissions where id = ${r.body.commission_id as number}`;
  t.equal(c!.currency, 'EUR');
  const usd = await sale(eur.token, {
    transaction_id: txn(),
    amount_cents: 1,
    click_id: clickId,
    currency: 'USD',
  });
  t.same([usd.status, usd.body], [400, { error: "currency must be the program's currency (EUR)" }]);
});

t.test('a processor event in another currency is recorded unattributed (currency_mismatch)', async (t) => {
  const usd = await program('USD');
  await sql`
    insert into processor_connections (workspace_id, status, webhook_secret)
    select workspace_id, 'connected', ${SECRET} from programs where id = ${usd.id}`;
  const clickId = await click(usd.link.shortLink);
  const lead = await postJson(url('/api/v1/track/lead'), { click_id: clickId, customer_key: 'cur-buyer' });
  t.equal(lead.status, 200);
  const session = checkoutSession({
    amount_total: 5000,
    currency: 'eur',
    metadata: { svc_customer_key: 'cur-buyer' },
  });
  const event = stripeEvent('checkout.session.completed', session);
  const payload = JSON.stringify(event);
  const res = await fetch(url(`/api/v1/webhooks/processor/${usd.id}`), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature(payload, SECRET) },
    body: payload,
  });
  t.equal(res.status, 200);
  const row = await waitFor(
    'the event outcome',
    async () => {
      const [r] = await sql<{ outcome: string; reason: string | null; sale_id: string | null }[]>`
        select outcome, reason, sale_id from processor_events where program_id = ${usd.id} and event_id = ${event.id}`;
      return r;
    },
    60_000,
  );
  t.same(row, { outcome: 'unattributed', reason: 'currency_mismatch', sale_id: null });
  const [s] =
    await sql`select count(*)::int as n from sales where transaction_id = ${session.payment_intent}`;
  t.equal(s!.n, 0, 'no sale');
  t.equal(await revenue(usd.id), 0, 'no revenue');
});
