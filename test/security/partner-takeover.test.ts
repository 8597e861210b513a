// Issue 28's first two attacks, end to end against the real stack, as an attacker would try them
// (CONTRACT part three "Who may see and change what"; docs/security.md "Partner accounts and claims"):
//
// 1. Taking over a partner through the public application form: an advertiser invites v@x to program A (a
//    record with a commission, never signed in); a stranger applies to the workspace's public program B
//    with v@x and a password of their own. Before: 201, the password saw A's commission and balance and
//    redirected the payout method, and the real partner's invite answered 401. Now the stranger's account
//    sees nothing, and the invite reaches the real partner and locks the stranger out.
// 2. A hostile workspace reading a person's payout details: workspace H adds person@x (a partner of another
//    workspace with a PayPal payout method). Before: the person's next sign-in link claimed H's record
//    silently, and H's payouts and exports showed the PayPal address. Now H's record is an invitation that
//    H sees nothing through until the person accepts it.
// Plus: a changed payout method is mailed to the account, masked.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import {
  PARTNER_PASSWORD,
  addPartner,
  apiProgram,
  invitedPartner,
  magicTokenOf,
  mailsTo,
  tokenOf,
  uniqEmail,
} from '../helpers/partners.ts';
import { seedCommissions } from '../helpers/commissions.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker'], {
  AUTH_RATE_LIMIT_PER_MINUTE: '0',
  APPLY_RATE_LIMIT_PER_MINUTE: '0',
});
const url = (p: string) => `${svc.baseUrl}${p}`;
const ATTACKER_PASSWORD = 'attacker password 1';

t.test('a stranger applying with a partner’s email gets nothing of the partner’s record', async (t) => {
  const owner = await signup(svc);
  const A = await apiProgram(svc, owner);
  const B = await apiProgram(svc, owner, { public_page: true });
  // The advertiser invites v@x to A and a sale earns the record a commission; v@x never signs in.
  const victim = await addPartner(svc, owner, A.id, { email: uniqEmail('victim') });
  const link = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${A.id}/partners/${victim.partnerId}/links`),
    {},
    bearer(owner.session),
  );
  const shortLink = (link.body.data as { short_link: string }).short_link;
  const click = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${shortLink}`,
  });
  const customer = `c-${randomBytes(4).toString('hex')}`;
  const lead = await postJson(
    url('/api/v1/track/lead'),
    { click_id: click.body.click_id, customer_key: customer },
    bearer(A.token),
  );
  t.equal(lead.status, 200, 'lead');
  const sale = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `t-${customer}`, amount_cents: 10_000, customer_key: customer },
    bearer(A.token),
  );
  t.match([sale.status, sale.body], [200, { commission_id: Number }], 'a commission for the victim');

  // The attack: apply to the public program B with the victim's address and the attacker's password.
  const applied = await postJson(url(`/api/public/programs/${B.slug}/apply`), {
    name: 'Not the victim',
    email: victim.email,
    password: ATTACKER_PASSWORD,
  });
  t.equal(applied.status, 201, 'the application is recorded (on the existing record)');
  const login = await postJson(url('/api/partner/auth/login'), {
    email: victim.email,
    password: ATTACKER_PASSWORD,
  });
  t.equal(login.status, 200, "the attacker's password signs in to an unverified account");
  const attacker = bearer((login.body.data as { session_token: string }).session_token);
  const me = await getJson(url('/api/partner/me'), attacker);
  t.match(me.body.data, { account: { email_verified: false }, partners: [] }, 'claims nothing');
  for (const path of [
    '/api/partner/programs',
    '/api/partner/commissions',
    `/api/partner/programs/${A.id}/links`,
    '/api/partner/payouts',
    '/api/partner/payout-method',
    '/api/partner/notifications',
    '/api/partner/invitations',
  ]) {
    const r = await getJson(url(path), attacker);
    t.equal(r.status, 403, `GET ${path}: 403`);
    t.notOk(
      r.text.includes(shortLink) || r.text.includes('10000'),
      `GET ${path} shows nothing of the record`,
    );
  }
  const redirect = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'paypal', email: 'attacker@evil.example' },
    attacker,
  );
  t.equal(redirect.status, 403, "the payout method can't be set");
  const [method] = await sql<{ n: number }[]>`
    select count(*)::int as n from partner_accounts where lower(email) = ${victim.email} and payout_method is not null`;
  t.equal(method!.n, 0, 'no payout method stored');
  const claims = await sql`
    select 1 from partner_claims where partner_id = ${victim.partnerId}`;
  t.equal(claims.length, 0, 'the record is claimed by nobody');
  const mailed = (await mailsTo(sql, svc.prefix, victim.email)).filter((m) => m.template === 'magic_link');
  t.equal(mailed.length, 1, 'a sign-in link went to the real address (it claims nothing)');
  t.notOk('program_name' in mailed[0]!.data, 'a plain sign-in link, not a claim of the record');

  // The real partner's invite reaches them: their password, the attacker's session and password dead.
  const accepted = await postJson(url('/api/partner/auth/accept-invite'), {
    token: tokenOf(victim.inviteUrl!),
    password: PARTNER_PASSWORD,
  });
  t.equal(accepted.status, 200, 'the invite is accepted');
  const real = bearer((accepted.body.data as { session_token: string }).session_token);
  t.equal((await getJson(url('/api/partner/me'), attacker)).status, 401, "the attacker's session ended");
  const again = await postJson(url('/api/partner/auth/login'), {
    email: victim.email,
    password: ATTACKER_PASSWORD,
  });
  t.equal(again.status, 401, "the attacker's password no longer signs in");
  const programs = await getJson(url('/api/partner/programs'), real);
  t.match(
    (programs.body.data as { program: { id: number } }[]).map((p) => p.program.id).sort(),
    [A.id, B.id].sort(),
    "the real partner sees A, and B's application on the same record",
  );
  await waitFor('the commission', async () => {
    const c = await getJson(url('/api/partner/commissions'), real);
    return (c.body.data as unknown[]).length === 1;
  });
});

t.test('a hostile workspace adding someone’s email sees none of their payout details', async (t) => {
  // The person: a partner of workspace W with a PayPal payout method, mailbox verified.
  const W = await signup(svc);
  const WP = await apiProgram(svc, W);
  const person = await invitedPartner(svc, W, WP.id);
  await send('POST', url('/api/partner/auth/magic-link'), { email: person.email });
  const v = await postJson(url('/api/partner/auth/magic-link/verify'), {
    token: await magicTokenOf(sql, svc.prefix, person.email),
  });
  const session = bearer((v.body.data as { session_token: string }).session_token);
  const accept = await send('POST', url(`/api/partner/invitations/${person.partnerId}/accept`), {}, session);
  t.equal(accept.status, 200, "the person accepts W's record again once their mailbox is proven");
  const paypal = `paypal-${randomBytes(4).toString('hex')}@person.example`;
  const set = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'paypal', email: paypal },
    session,
  );
  t.equal(set.status, 200);
  const notice = (await mailsTo(sql, svc.prefix, person.email)).filter(
    (m) => m.template === 'payout_method_changed',
  );
  t.equal(notice.length, 1, 'the change is mailed to the account');
  t.match(notice, [{ data: { method: /^PayPal p\*+@person\.example$/, changed_at: /UTC$/ } }]);
  t.notOk(JSON.stringify(notice).includes(paypal), 'masked');

  // The attack: workspace H adds person@x as its own partner, with approved commissions to pay.
  const H = await signup(svc);
  const HP = await apiProgram(svc, H);
  const added = await addPartner(svc, H, HP.id, { email: person.email });
  await seedCommissions(sql, { programId: HP.id, partnerId: added.partnerId, partnerProgramId: added.ppId }, [
    { saleCents: 10_000, amountCents: 3_000 },
  ]);
  // The person signs in by a sign-in link again: H's record is not claimed by it.
  await send('POST', url('/api/partner/auth/magic-link'), { email: person.email });
  const again = await postJson(url('/api/partner/auth/magic-link/verify'), {
    token: await magicTokenOf(sql, svc.prefix, person.email),
  });
  t.equal(again.status, 200);
  const me = await getJson(
    url('/api/partner/me'),
    bearer((again.body.data as { session_token: string }).session_token),
  );
  t.notOk(
    (me.body.data as { partners: { id: number }[] }).partners.some((p) => p.id === added.partnerId),
    "H's record is not claimed by a sign-in link",
  );
  // What H sees: its partner row, a payout, the preview and every export, without the PayPal address.
  const seen: string[] = [];
  const hb = bearer(H.session);
  const base = `/api/advertiser/affiliate-programs/${HP.id}`;
  const preview = await getJson(url(`${base}/payouts/preview`), hb);
  t.equal(preview.status, 200, 'preview');
  seen.push(preview.text);
  const created = await send('POST', url(`${base}/payouts`), {}, hb);
  t.equal(created.status, 201, 'a payout for the record');
  t.match(created.body.data, [{ partner_id: added.partnerId, payout_method: null }]);
  seen.push(created.text);
  seen.push((await getJson(url(`${base}/payouts`), hb)).text);
  seen.push((await getJson(url(`${base}/partners`), hb)).text);
  for (const format of ['paypal', 'wise', 'csv']) {
    const r = await fetch(url(`${base}/payouts/export?format=${format}&status=pending`), { headers: hb });
    seen.push(await r.text());
  }
  for (const text of seen) t.notOk(text.includes(paypal), 'H never sees the PayPal address');
  // Once the person accepts H's invitation, H sees it: consent first.
  const invitations = await getJson(
    url('/api/partner/invitations'),
    bearer((again.body.data as { session_token: string }).session_token),
  );
  t.match(invitations.body.data, [{ partner_id: added.partnerId }], "H's record is an invitation");
  const joined = await send(
    'POST',
    url(`/api/partner/invitations/${added.partnerId}/accept`),
    {},
    bearer((again.body.data as { session_token: string }).session_token),
  );
  t.equal(joined.status, 200);
  const after = await getJson(url(`${base}/payouts`), hb);
  t.ok(after.text.includes(paypal), 'after the person accepted, H reads the payout method');
});
