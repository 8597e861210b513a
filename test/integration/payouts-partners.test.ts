// Payouts seen from the partners' side, with real partner accounts (CONTRACT part two): the `partner_ip`
// hold (a click from the IP of a sign-in of the partner's account; both kept only as keyed hashes), the
// `self_referral` hold through an account that claimed the record, the exports reading each partner's payout
// method from the portal (PayPal, Wise, bank transfer, none), and the partner API's payouts and commission
// fields, each partner seeing only its own.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { PARTNER_PASSWORD, addPartner, apiProgram, tokenOf } from '../helpers/partners.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker', 'ledger-worker'], {
  APPROVAL_SWEEP_MS: '200',
});
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(4).toString('hex');
const owner = await signup(svc);
const auth = bearer(owner.session);
const program = await apiProgram(svc, owner, {
  hold_days: 0,
  commission: { type: 'flat', amount_cents: 1500 },
});
const P = url(`/api/advertiser/affiliate-programs/${program.id}`);
const SIGN_IN_IP = '203.0.113.77';

/** A partner added by the advertiser who accepted the invite from `ip`, with a link. */
async function partner(ip: string) {
  const added = await addPartner(svc, owner, program.id);
  const r = await send(
    'POST',
    url('/api/partner/auth/accept-invite'),
    { token: tokenOf(added.inviteUrl!), password: PARTNER_PASSWORD, name: 'Pat' },
    { 'x-forwarded-for': ip },
  );
  if (r.status !== 200) throw new Error(`accept invite: ${r.status} ${r.text}`);
  const d = r.body.data as { session_token: string; account: { id: number } };
  const l = await send('POST', `${P}/partners/${added.partnerId}/links`, {}, auth);
  return {
    ...added,
    session: bearer(d.session_token),
    accountId: d.account.id,
    shortLink: (l.body.data as { short_link: string }).short_link,
  };
}

async function sale(shortLink: string, opts: { ip: string; email?: string }) {
  const c = await postJson(
    url('/api/v1/track/click'),
    { affiliate_url: `https://shop.example/?aff=${shortLink}` },
    { 'x-forwarded-for': opts.ip },
  );
  const clickId = c.body.click_id as string;
  const key = `c-${uniq()}`;
  const l = await postJson(
    url('/api/v1/track/lead'),
    { click_id: clickId, customer_key: key, email: opts.email ?? `${key}@customer.example` },
    bearer(program.token),
  );
  if (l.status !== 200) throw new Error(`lead: ${JSON.stringify(l.body)}`);
  const s = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `t-${uniq()}`, amount_cents: 10_000, customer_key: key },
    bearer(program.token),
  );
  if (typeof s.body.commission_id !== 'number') throw new Error(`sale: ${JSON.stringify(s.body)}`);
  return { commissionId: s.body.commission_id, clickId };
}
const reasonOf = async (id: number) =>
  (await sql<{ review_reason: string | null }[]>`select review_reason from commissions where id = ${id}`)[0]!
    .review_reason;

t.test(
  'partner_ip: a click from an IP the partner signed in from is held; the IP is kept only hashed',
  async (t) => {
    const a = await partner(SIGN_IN_IP);
    const [signIn] = await sql<{ ip_hash: string }[]>`
    select ip_hash from partner_sign_ins where account_id = ${a.accountId}`;
    t.ok(signIn?.ip_hash, 'the sign-in recorded its IP hash');

    const own = await sale(a.shortLink, { ip: SIGN_IN_IP });
    t.equal(await reasonOf(own.commissionId), 'partner_ip', 'clicked from the partner’s own IP');
    const other = await sale(a.shortLink, { ip: '198.51.100.23' });
    t.equal(await reasonOf(other.commissionId), null, 'another IP: not held');

    const [click] = await sql<{ ip_hash: string | null }[]>`
    select ip_hash from click_events where click_id = ${own.clickId}`;
    t.equal(click!.ip_hash, signIn!.ip_hash, 'the click and the sign-in hash alike');
    t.not(click!.ip_hash, SIGN_IN_IP);
    const leaked = await sql`
    select 1 from click_events where click_id = ${own.clickId} and to_jsonb(click_events)::text like ${`%${SIGN_IN_IP}%`}`;
    t.same(leaked, [], 'the address itself is stored nowhere in the click');

    // A partner record no account has claimed: its clicks are never compared (no sign-ins to compare with).
    const unclaimed = await addPartner(svc, owner, program.id);
    const l = await send('POST', `${P}/partners/${unclaimed.partnerId}/links`, {}, auth);
    const u = await sale((l.body.data as { short_link: string }).short_link, { ip: SIGN_IN_IP });
    t.equal(await reasonOf(u.commissionId), null);
  },
);

t.test('self_referral through the account that claimed the record', async (t) => {
  const b = await partner('192.0.2.10');
  const accountEmail = (await sql`select email from partner_accounts where id = ${b.accountId}`)[0]!
    .email as string;
  // The record's own email is another address now: the account that claimed it still counts.
  await sql`update partners set email = ${`renamed-${uniq()}@example.com`} where id = ${b.partnerId}`;
  const s = await sale(b.shortLink, { ip: '198.51.100.99', email: accountEmail.toUpperCase() });
  t.equal(await reasonOf(s.commissionId), 'self_referral');
  const plain = await sale(b.shortLink, { ip: '198.51.100.99' });
  t.equal(await reasonOf(plain.commissionId), null);
});

t.test('exports read each partner’s payout method; partners see their own payouts', async (t) => {
  const pay = await partner('192.0.2.21');
  const wise = await partner('192.0.2.22');
  const bank = await partner('192.0.2.23');
  const none = await partner('192.0.2.24');
  for (const [p, body] of [
    [pay, { type: 'paypal', email: 'Pay.Pal@Example.com' }],
    [wise, { type: 'wise', email: 'wise@example.com' }],
    [bank, { type: 'bank_transfer', details: 'Bo Bank, IBAN DE89 3704 0044 0532 0130 00' }],
  ] as const) {
    const r = await send('PUT', url('/api/partner/payout-method'), body, p.session);
    t.equal(r.status, 200, r.text);
  }
  const sales = [];
  for (const p of [pay, wise, bank, none]) sales.push(await sale(p.shortLink, { ip: '198.51.100.1' }));
  for (const s of sales) {
    await waitFor('approved', async () => {
      const [c] = await sql`select status from commissions where id = ${s.commissionId}`;
      return c!.status === 'approved';
    });
  }
  const preview = await getJson(`${P}/payouts/preview`, auth);
  const flags = Object.fromEntries(
    (preview.body.data as { partner_id: number; has_payout_method: boolean }[]).map((d) => [
      d.partner_id,
      d.has_payout_method,
    ]),
  );
  t.same(
    [flags[pay.partnerId], flags[wise.partnerId], flags[bank.partnerId], flags[none.partnerId]],
    [true, true, true, false],
  );
  const created = await send(
    'POST',
    `${P}/payouts`,
    { partner_ids: [pay.partnerId, wise.partnerId, bank.partnerId, none.partnerId] },
    auth,
  );
  t.equal(created.status, 201, created.text);
  const payouts = created.body.data as { id: number; partner_id: number; payout_method: unknown }[];
  const idOf = (partnerId: number) => payouts.find((p) => p.partner_id === partnerId)!.id;
  t.match(payouts.find((p) => p.partner_id === pay.partnerId)!.payout_method, {
    type: 'paypal',
    email: 'pay.pal@example.com',
  });

  const file = async (format: string) => {
    const r = await fetch(`${P}/payouts/export?format=${format}`, { headers: auth });
    return { status: r.status, text: await r.text(), leftOut: r.headers.get('x-payouts-left-out') };
  };
  const paypal = await file('paypal');
  t.equal(paypal.status, 200);
  t.match(
    paypal.text,
    `pay.pal@example.com,15.00,USD,payout-${idOf(pay.partnerId)},Affiliate payout: `,
    'the PayPal row',
  );
  t.equal(paypal.text.trim().split('\r\n').length, 1, 'only the PayPal partner');
  const wiseFile = (await file('wise')).text.trim().split('\r\n');
  t.same(wiseFile.slice(1), [
    `Pat Partner,wise@example.com,Payout ${idOf(wise.partnerId)},PERSON,USD,15.00,USD,USD`,
  ]);
  const csv = (await file('csv')).text;
  t.match(
    csv,
    new RegExp(`${idOf(bank.partnerId)},pending,${bank.partnerId},.*,bank_transfer,,"Bo Bank, IBAN DE89`),
  );
  t.match(csv, new RegExp(`${idOf(none.partnerId)},pending,${none.partnerId},.*,no payout method\\r\\n`));

  // The partner API: own payouts and commission fields; nobody else's.
  t.equal(
    (
      await send(
        'POST',
        url(`/api/advertiser/payouts/${idOf(pay.partnerId)}/mark-paid`),
        { reference: 'B-1' },
        auth,
      )
    ).status,
    200,
  );
  const mine = await getJson(url('/api/partner/payouts'), pay.session);
  t.match(mine.body, {
    data: [
      { id: idOf(pay.partnerId), amount_cents: 1500, status: 'paid', reference: 'B-1', paid_at: String },
    ],
    meta: { pagination: { total: 1 } },
  });
  t.same(
    ((await getJson(url('/api/partner/payouts'), wise.session)).body.data as { id: number }[]).map(
      (p) => p.id,
    ),
    [idOf(wise.partnerId)],
    'the other partner sees only its own',
  );
  const commissions = await getJson(url('/api/partner/commissions'), pay.session);
  t.match((commissions.body.data as unknown[])[0], {
    id: sales[0]!.commissionId,
    status: 'paid',
    payable_at: String,
    payout_id: idOf(pay.partnerId),
  });
  const cancel = await send(
    'POST',
    url(`/api/advertiser/payouts/${idOf(none.partnerId)}/cancel`),
    undefined,
    auth,
  );
  t.equal(cancel.status, 200);
  t.same(
    (await getJson(url('/api/partner/payouts'), none.session)).body.data,
    [],
    'a canceled payout is not listed',
  );
});
