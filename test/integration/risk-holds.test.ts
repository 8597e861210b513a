// The review holds of CONTRACT part three, through the real API and pipeline: a sale through a bot's or a
// prefetch's click (bot_traffic), a lead at a disposable-mailbox domain (disposable_email), a partner paid
// the same way as another partner account of the workspace (shared_payout_method), a click bought on search
// ads (paid_search); each switch of a program's risk_rules turned off lets the same sale through; the reason
// is in the commission, its commission.created / commission.updated and the partner's view ("under review");
// approve and reject work as for any hold. And risk_rules on programs: defaults, partial update, 400s.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, invitedPartner } from '../helpers/partners.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const programsUrl = url('/api/advertiser/affiliate-programs');
const uniq = () => randomBytes(4).toString('hex');
const owner = await signup(svc);
const auth = bearer(owner.session);
// Webhook events are written only for a workspace with an enabled endpoint (docs/webhooks.md).
await sql`insert into webhook_endpoints (workspace_id, url, secret)
  values (${owner.workspaceId}, 'https://hooks.example/risk', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

type Program = Awaited<ReturnType<typeof apiProgram>>;
const program = (fields: Record<string, unknown> = {}) =>
  apiProgram(svc, owner, { hold_days: 0, commission: { type: 'flat', amount_cents: 1000 }, ...fields });

async function linkOf(programId: number, partnerId: number): Promise<string> {
  const l = await send('POST', `${programsUrl}/${programId}/partners/${partnerId}/links`, {}, auth);
  if (l.status !== 201) throw new Error(`link: ${l.text}`);
  return (l.body.data as { short_link: string }).short_link;
}

interface SaleOpts {
  headers?: Record<string, string>;
  pageUrl?: string;
  email?: string;
}
/** click (as `headers` say) → lead (with `email`, when given) → sale; the commission as the API answers it. */
async function sale(p: Program, shortLink: string, o: SaleOpts = {}) {
  const c = await postJson(
    url('/api/v1/track/click'),
    {
      affiliate_url: `https://shop.example/?aff=${shortLink}`,
      page_url: o.pageUrl ?? 'https://shop.example/',
    },
    // Not the partner's own sign-in address (127.0.0.1): that would be the partner_ip hold.
    { 'user-agent': CHROME, 'x-forwarded-for': '203.0.113.7', ...o.headers },
  );
  if (c.status !== 200) throw new Error(`click: ${c.status} ${JSON.stringify(c.body)}`);
  const clickId = c.body.click_id as string;
  await waitFor(
    'the click to land',
    async () => (await sql`select 1 from customers where click_id = ${clickId}`)[0],
  );
  if (o.email !== undefined) {
    const l = await postJson(
      url('/api/v1/track/lead'),
      { click_id: clickId, customer_key: `c-${uniq()}`, email: o.email },
      bearer(p.token),
    );
    if (l.status !== 200) throw new Error(`lead: ${l.status} ${JSON.stringify(l.body)}`);
  }
  const s = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `txn-${uniq()}`, amount_cents: 5000, click_id: clickId },
    bearer(p.token),
  );
  if (s.status !== 200 || typeof s.body.commission_id !== 'number')
    throw new Error(`sale: ${s.status} ${JSON.stringify(s.body)}`);
  return commissionOf(p.id, s.body.commission_id);
}

interface Commission {
  id: number;
  status: string;
  review_reason: string | null;
}
async function commissionOf(programId: number, id: number): Promise<Commission> {
  const r = await getJson(`${programsUrl}/${programId}/commissions?pageSize=100`, auth);
  if (r.status !== 200) throw new Error(r.text);
  return (r.body.data as Commission[]).find((c) => c.id === id)!;
}

async function outboxEvents(type: string, id: number) {
  const rows = await sql<{ payload: { data: Record<string, unknown> } }[]>`
    select payload from outbox where topic like '%webhook-events' and payload->>'type' = ${type}
      and (payload->'data'->>'id')::bigint = ${id}
    order by id`;
  return rows.map((r) => r.payload.data);
}

t.test('risk_rules: defaults, read, partial update, bad input', async (t) => {
  const p = await program();
  const got = await getJson(`${programsUrl}/${p.id}`, auth);
  t.same(
    (got.body.data as { risk_rules: unknown }).risk_rules,
    { disposable_email: true, shared_payout_method: true, paid_search: false },
    'on by default, paid_search off',
  );
  const up = await send('PUT', `${programsUrl}/${p.id}`, { risk_rules: { paid_search: true } }, auth);
  t.equal(up.status, 200, up.text);
  t.same(
    (up.body.data as { risk_rules: unknown }).risk_rules,
    { disposable_email: true, shared_payout_method: true, paid_search: true },
    'only the switch given changes',
  );
  const created = await send(
    'POST',
    `${programsUrl}?workspace_id=${owner.workspaceId}`,
    { name: `R ${uniq()}`, risk_rules: { disposable_email: false } },
    auth,
  );
  t.equal(created.status, 201, created.text);
  t.same((created.body.data as { risk_rules: unknown }).risk_rules, {
    disposable_email: false,
    shared_payout_method: true,
    paid_search: false,
  });
  const message =
    'risk_rules must be an object of true or false switches: disposable_email, shared_payout_method, paid_search';
  for (const bad of [{ paid_search: 'yes' }, { unknown_rule: true }, [true], 'on', 3]) {
    const r = await send('PUT', `${programsUrl}/${p.id}`, { risk_rules: bad }, auth);
    t.same([r.status, r.body], [400, { error: message }], JSON.stringify(bad));
  }
  const nul = await send('PUT', `${programsUrl}/${p.id}`, { risk_rules: null }, auth);
  t.same([nul.status, nul.body], [400, { error: 'risk_rules cannot be null' }]);
});

t.test('bot_traffic: a sale through a bot or a prefetch is held, a person’s is not', async (t) => {
  const p = await program();
  const partner = await invitedPartner(svc, owner, p.id);
  const link = await linkOf(p.id, partner.partnerId);
  const person = await sale(p, link);
  const bot = await sale(p, link, { headers: { 'user-agent': GOOGLEBOT } });
  const expander = await sale(p, link, { headers: { 'user-agent': 'WhatsApp/2.23.20.0 A' } });
  const prefetch = await sale(p, link, { headers: { 'sec-purpose': 'prefetch' } });
  t.equal(person.review_reason, null, 'a person: not held');
  for (const c of [bot, expander, prefetch]) t.match(c, { status: 'pending', review_reason: 'bot_traffic' });

  const created = await outboxEvents('commission.created', bot.id);
  t.equal(created[0]?.review_reason, 'bot_traffic', 'commission.created says why');

  // The partner's view: under review, and not why.
  const mine = await getJson(url(`/api/partner/commissions?program_id=${p.id}`), bearer(partner.session));
  t.equal(mine.status, 200, mine.text);
  const rows = mine.body.data as { id: number; under_review: boolean; review_reason?: unknown }[];
  t.equal(rows.find((r) => r.id === bot.id)!.under_review, true, 'the partner sees it under review');
  t.equal(rows.find((r) => r.id === person.id)!.under_review, false);
  t.notOk('review_reason' in rows[0]!, 'the reason is the advertiser’s');

  // Approve and reject as for any hold; commission.updated carries the row.
  const a = await send('POST', url(`/api/advertiser/commissions/${bot.id}/approve`), undefined, auth);
  t.match([a.status, a.body.data], [200, { review_reason: null }]);
  const r = await send(
    'POST',
    url(`/api/advertiser/commissions/${expander.id}/reject`),
    { reason: 'bot' },
    auth,
  );
  t.match([r.status, r.body.data], [200, { status: 'reversed', review_reason: 'bot_traffic' }]);
  const updated = await outboxEvents('commission.updated', expander.id);
  t.match(
    updated.at(-1),
    { status: 'reversed', review_reason: 'bot_traffic' },
    'commission.updated says why',
  );
});

t.test('disposable_email: a lead at a throwaway domain is held; off, it is not', async (t) => {
  const on = await program();
  const off = await program({ risk_rules: { disposable_email: false } });
  const pOn = await addPartner(svc, owner, on.id);
  const pOff = await addPartner(svc, owner, off.id);
  const linkOn = await linkOf(on.id, pOn.partnerId);
  const linkOff = await linkOf(off.id, pOff.partnerId);
  t.match(await sale(on, linkOn, { email: `buyer-${uniq()}@mailinator.com` }), {
    review_reason: 'disposable_email',
  });
  t.match(
    await sale(on, linkOn, { email: `Buyer-${uniq()}@Sub.Mailinator.COM` }),
    {
      review_reason: 'disposable_email',
    },
    'any case, a subdomain',
  );
  t.match(await sale(on, linkOn, { email: `buyer-${uniq()}@gmail.com` }), { review_reason: null });
  t.match(
    await sale(off, linkOff, { email: `buyer-${uniq()}@mailinator.com` }),
    { review_reason: null },
    'rule off: not held',
  );
});

t.test('paid_search: a click that carried gclid, gbraid, wbraid or msclkid; off by default', async (t) => {
  const on = await program({ risk_rules: { paid_search: true } });
  const byDefault = await program();
  const pOn = await addPartner(svc, owner, on.id);
  const pDefault = await addPartner(svc, owner, byDefault.id);
  const linkOn = await linkOf(on.id, pOn.partnerId);
  const linkDefault = await linkOf(byDefault.id, pDefault.partnerId);
  for (const param of ['gclid', 'gbraid', 'wbraid', 'msclkid']) {
    t.match(
      await sale(on, linkOn, { pageUrl: `https://shop.example/?utm_source=x&${param}=Cj0KCQ${uniq()}` }),
      { review_reason: 'paid_search' },
      param,
    );
  }
  t.match(await sale(on, linkOn, { pageUrl: 'https://shop.example/?utm_source=newsletter' }), {
    review_reason: null,
  });
  t.match(
    await sale(byDefault, linkDefault, { pageUrl: 'https://shop.example/?gclid=abc' }),
    { review_reason: null },
    'off by default: not held',
  );
});

t.test('shared_payout_method: another partner account of the workspace is paid the same way', async (t) => {
  const p = await program();
  const other = await program();
  const a = await invitedPartner(svc, owner, p.id);
  const b = await invitedPartner(svc, owner, other.id);
  const c = await invitedPartner(svc, owner, p.id);
  const shared = `Payee-${uniq()}@pay.example`;
  await sql`update partner_accounts set payout_method = ${sql.json({ type: 'paypal', email: shared })}
            where id = ${a.accountId}`;
  await sql`update partner_accounts set payout_method = ${sql.json({ type: 'paypal', email: ` ${shared.toLowerCase()} ` })}
            where id = ${b.accountId}`;
  await sql`update partner_accounts set payout_method = ${sql.json({ type: 'paypal', email: `own-${uniq()}@pay.example` })}
            where id = ${c.accountId}`;
  const linkA = await linkOf(p.id, a.partnerId);
  const linkC = await linkOf(p.id, c.partnerId);
  t.match(await sale(p, linkA), { review_reason: 'shared_payout_method' }, 'same PayPal, another program');
  t.match(await sale(p, linkC), { review_reason: null }, 'an own payout method');

  // A workspace of its own: the same PayPal account there is none of this workspace's business.
  const stranger = await signup(svc);
  const far = await apiProgram(svc, stranger, { hold_days: 0 });
  const d = await invitedPartner(svc, stranger, far.id);
  await sql`update partner_accounts set payout_method = ${sql.json({ type: 'paypal', email: `far-${uniq()}@pay.example` })}
            where id = ${d.accountId}`;
  await sql`update partner_accounts set payout_method = ${sql.json({ type: 'paypal', email: `far-${uniq()}@pay.example` })}
            where id = ${c.accountId}`;
  t.match(await sale(p, linkC), { review_reason: null }, 'another workspace does not count');

  const off = await send(
    'PUT',
    `${programsUrl}/${p.id}`,
    { risk_rules: { shared_payout_method: false } },
    auth,
  );
  t.equal(off.status, 200);
  t.match(await sale(p, linkA), { review_reason: null }, 'rule off: not held');
});
