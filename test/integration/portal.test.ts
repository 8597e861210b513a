// The partner portal (/partner/) in a real browser against the real service: sign in with a password (and
// a wrong one), a sign-in link (its mail read from the outbox), an invite accepted in the page, the
// program page with its links (copy, create my own, a taken code), the partner's chart and commissions
// after a click and a sale, an invitation accepted after a sign-in link, notifications (unread count, mark
// read, mark all read), the payout method and its mailed notice,
// the payouts' empty state, what is owed above the payouts, another partner's program, sign out; every page at 1280 and 390 px without
// sideways scrolling and without console errors.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { launchBrowser } from '../helpers/browser.ts';
import {
  PARTNER_PASSWORD,
  docShot,
  invitePartner,
  openPortal,
  pageWiderThanViewport,
  partnerAccount,
  pathOf,
  queuedMailUrl,
} from '../helpers/portal.ts';
import { storeNotifications } from '../../services/workers/notifications/apply.ts';
import { seedCommissions } from '../helpers/commissions.ts';

const svc = await startServices(t, [
  'web',
  'click-worker',
  'attribution-worker',
  'reversal-worker',
  'ledger-worker',
  'notification-worker',
]);
const sql = testSql(t);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);
const phone = { width: 390, height: 844 };

const owner = await signup(svc, { workspace: 'Acme' });
const created = await postJson(
  api('/api/advertiser/affiliate-programs'),
  {
    name: 'Acme shop',
    currency: 'EUR',
    allowed_origins: ['https://shop.example'],
    commission: { type: 'percentage', percent: 25 },
  },
  bearer(owner.session),
);
if (created.status !== 201) throw new Error(`program: ${JSON.stringify(created.body)}`);
const program = created.body.data as { id: number; api_token: string; name: string };
await postJson(api(`/api/advertiser/affiliate-programs/${program.id}/go-live`), {}, bearer(owner.session));
const pat = await partnerAccount(svc.baseUrl, owner.session, program.id, { name: 'Pat Partner' });

t.test('sign in with a password: the programs; a wrong password; sign out', async (t) => {
  const { page, context, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl);
  await goto('/partner/');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('Email', { exact: true }).fill(pat.email);
  await page.getByLabel('Password', { exact: true }).fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
  await page.getByLabel('Password', { exact: true }).fill(PARTNER_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  const card = page.locator('.card', { hasText: 'Acme shop' });
  await card.waitFor();
  t.match(await card.innerText(), /Approved/);
  t.match(await card.innerText(), /25% of each sale/);
  t.equal((await card.getByTestId('balance').innerText()).replace(/\s/g, ''), '€0.00');
  t.equal(page.url(), api('/partner/'), 'the address is the programs page');
  t.equal(
    await page.evaluate<string>('document.cookie'),
    '',
    'the session cookie is HttpOnly: invisible to scripts',
  );
  await docShot(page, 'portal-programs');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.equal((await context.request.get('/api/partner/auth/session')).status(), 401, 'the session is dead');
  assertNoErrors(t);
});

t.test('a sign-in link by mail signs in once; an unknown email gets the same answer', async (t) => {
  // Its own partner: following a link clears a password set before the email was proven (docs/partners.md).
  const mia = await partnerAccount(svc.baseUrl, owner.session, program.id, { name: 'Mia Mail' });
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    viewport: phone,
    allowStatus: [{ status: 400, url: /\/api\/partner\/auth\/session\/magic-link$/ }],
  });
  await goto('/partner/login');
  await page.getByLabel('Email for the link').fill(`nobody-${randomBytes(3).toString('hex')}@x.example`);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  const sent = page.getByRole('status').filter({ hasText: 'a sign-in link is on its way' });
  await sent.waitFor();
  await page.getByLabel('Email for the link').fill(mia.email);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await page.getByRole('status').filter({ hasText: mia.email }).waitFor();
  t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');
  await docShot(page, 'portal-sign-in', { fullPage: false });

  const link = await queuedMailUrl(sql, svc.prefix, mia.email, 'magic_link');
  t.match(link, new RegExp(`^${svc.baseUrl}/partner/magic#pmagic_`), 'the mail links to the portal');
  await goto(pathOf(link));
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  t.equal(page.url(), api('/partner/'), 'the token left the address bar');
  // Mia had joined by an invite (whose URL the advertiser sees too): the first sign-in link proves her
  // mailbox and asks her to accept that record again (docs/security.md "Partner accounts and claims").
  const invitation = page.getByRole('article', { name: 'Invitation from Acme' });
  await invitation.waitFor();
  t.match(await invitation.innerText(), /Acme shop: 25% of each sale/);
  await docShot(page, 'portal-invitations', { fullPage: false });
  await invitation.getByRole('button', { name: 'Accept' }).click();
  await page.locator('.card', { hasText: 'Acme shop' }).getByTestId('balance').waitFor();
  t.equal(await page.getByRole('article', { name: 'Invitation from Acme' }).count(), 0, 'accepted');

  const second = await openPortal(t, browser, svc.baseUrl, {
    allowStatus: [{ status: 400, url: /\/api\/partner\/auth\/session\/magic-link$/ }],
  });
  await second.goto(pathOf(link));
  await second.page.getByRole('alert').filter({ hasText: 'Invalid or expired sign-in link' }).waitFor();
  await second.page.getByRole('link', { name: 'Ask for a new one' }).waitFor();
  assertNoErrors(t);
  second.assertNoErrors(t);
});

t.test('an invite accepted in the page: name, password, then the program', async (t) => {
  const inv = await invitePartner(svc.baseUrl, owner.session, program.id, { name: 'Ivy Invited' });
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    viewport: phone,
    allowStatus: [{ status: 400, url: /\/api\/partner\/auth\/session\/accept-invite$/ }],
  });
  t.match(inv.inviteUrl, new RegExp(`^${svc.baseUrl}/partner/invite#pinv_`), 'the token after #');
  await goto(pathOf(inv.inviteUrl));
  await page.getByRole('heading', { name: 'Accept your invite' }).waitFor();
  t.equal(page.url(), api('/partner/invite'), 'the token left the address bar at once');
  await page.getByLabel('Your name').fill('Ivy Invited');
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Accept invite' }).click();
  // The browser's own check (minLength) keeps a short password from being sent at all.
  t.equal(page.url(), api('/partner/invite'), 'still on the invite');
  await page.getByLabel('Password').fill('ivy invited password');
  await docShot(page, 'portal-invite', { fullPage: false });
  await page.getByRole('button', { name: 'Accept invite' }).click();
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  await page.locator('.card', { hasText: 'Acme shop' }).waitFor();
  t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');
  const login = await postJson(api('/api/partner/auth/login'), {
    email: inv.email,
    password: 'ivy invited password',
  });
  t.equal(login.status, 200, 'the password set in the page signs in');

  const again = await openPortal(t, browser, svc.baseUrl, {
    allowStatus: [{ status: 400, url: /\/api\/partner\/auth\/session\/accept-invite$/ }],
  });
  await again.goto(pathOf(inv.inviteUrl));
  await again.page.getByLabel('Password').fill('another password 123');
  await again.page.getByRole('button', { name: 'Accept invite' }).click();
  await again.page.getByRole('alert').filter({ hasText: 'Invalid or expired invite' }).waitFor();
  assertNoErrors(t);
  again.assertNoErrors(t);
});

let clickCode = '';
t.test('the program page: my own link, copy it, a taken code; the chart and commissions', async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    as: pat,
    clipboard: true,
    allowStatus: [{ status: 409, url: /\/api\/partner\/programs\/\d+\/links$/ }],
  });
  // A code the advertiser gave Pat (docs/codes.md), and one it deactivated.
  const codeOf = async (code: string) => {
    const r = await postJson(
      api(`/api/advertiser/affiliate-programs/${program.id}/partners/${pat.partnerId}/codes`),
      { code },
      bearer(owner.session),
    );
    if (r.status !== 201) throw new Error(`code: ${JSON.stringify(r.body)}`);
    return r.body.data as { id: number };
  };
  const patCode = `PAT${randomBytes(3).toString('hex')}`.toUpperCase();
  await codeOf(patCode);
  const old = await codeOf(`OLD${randomBytes(3).toString('hex')}`);
  const gone = await fetch(api(`/api/advertiser/affiliate-programs/${program.id}/codes/${old.id}`), {
    method: 'DELETE',
    headers: bearer(owner.session),
  });
  t.equal(gone.status, 200);
  await goto('/partner/');
  await page.getByRole('link', { name: 'Acme shop', exact: true }).click();
  await page.getByRole('heading', { name: 'Acme shop' }).waitFor();
  await page.getByRole('heading', { name: 'Your links' }).waitFor();
  await page.getByRole('heading', { name: 'Your codes' }).waitFor();
  const codeItem = page.locator('.code-list li', { hasText: patCode });
  await codeItem.getByRole('button', { name: 'Copy code' }).click();
  await codeItem.getByRole('button', { name: 'Copied' }).waitFor();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), patCode, 'the code is copied');
  t.equal(
    await page.locator('.code-list li.inactive').getByRole('button').count(),
    0,
    'an inactive code has no Copy button',
  );
  await page.getByRole('heading', { name: 'Your performance' }).waitFor();

  clickCode = `pat-${randomBytes(3).toString('hex')}`;
  const form = page.getByRole('form', { name: 'Create my own link' });
  await form.getByLabel('Link code').fill(clickCode);
  await form.getByRole('button', { name: 'Create link' }).click();
  const url = page.getByTestId('referral-url').filter({ hasText: clickCode });
  await url.waitFor();
  // Full links on the program's first allowed origin (it has no website_url), without typing anything.
  t.equal(await page.getByLabel('Page the links lead to').inputValue(), 'https://shop.example');
  const full = `https://shop.example/?aff=${clickCode}`;
  await page.getByTestId('referral-url').filter({ hasText: full }).waitFor();
  await page
    .locator('.link-list li', { hasText: clickCode })
    .getByRole('button', { name: 'Copy link' })
    .click();
  await page
    .locator('.link-list li', { hasText: clickCode })
    .getByRole('button', { name: 'Copied' })
    .waitFor();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), full, 'the full link is copied');

  await form.getByLabel('Link code').fill(clickCode);
  await form.getByRole('button', { name: 'Create link' }).click();
  await form.getByRole('alert').filter({ hasText: 'short_link is already taken' }).waitFor();

  // A click on that link and a sale through the API: the chart's totals and the commission appear.
  const clickId = await waitFor('a click on the partner link', async () => {
    const r = await postJson(api('/api/v1/track/click'), { affiliate_url: full });
    return r.status === 200 && r.body.success === true ? (r.body.click_id as string) : null;
  });
  const order = `order-${randomBytes(4).toString('hex')}`;
  const sale = await waitFor(
    'the sale answered',
    async () => {
      const r = await postJson(
        api('/api/v1/track/sale'),
        { transaction_id: order, amount_cents: 10_000, click_id: clickId },
        { ...bearer(program.api_token), 'idempotency-key': order },
      );
      return r.status === 503 ? null : r;
    },
    60_000,
    500,
  );
  t.equal(sale.status, 200, JSON.stringify(sale.body));
  await waitFor(
    'the sale in the partner chart',
    async () => {
      await page.reload();
      await page.getByTestId('tile-earnings').waitFor();
      return (
        (await page.getByTestId('tile-clicks').innerText()) === '1' &&
        (await page.getByTestId('tile-conversions').innerText()) === '1'
      );
    },
    60_000,
    1000,
  );
  t.equal((await page.getByTestId('tile-earnings').innerText()).replace(/\s/g, ''), '€25.00');
  t.equal((await page.locator('figure.chart canvas').count()) >= 2, true, 'two charts are drawn');
  await page.getByText('Daily figures as a table').click();
  const today = new Date().toISOString().slice(0, 10);
  t.match(await page.getByRole('row', { name: new RegExp(today) }).innerText(), /1\s+0\s+1\s+€25\.00/);
  await docShot(page, 'portal-program');

  await page.getByRole('link', { name: 'Commissions', exact: true }).first().click();
  await page.getByRole('heading', { name: 'Commissions' }).waitFor();
  const row = page.locator('tr[data-commission]');
  await row.first().waitFor();
  t.equal(await row.count(), 1);
  t.match(await row.innerText(), /Acme shop\s+€100\.00\s+€25\.00\s+(pending|approved)/);
  await docShot(page, 'portal-commissions');
  assertNoErrors(t);
});

t.test('notifications: the unread count, mark one read, mark all read', async (t) => {
  // Stored as the notification worker stores what the outbox brings it.
  await sql.begin((tx) =>
    storeNotifications(tx, { kafkaPrefix: svc.prefix, publicUrl: svc.baseUrl }, [
      {
        notification_key: `test:${randomBytes(4).toString('hex')}`,
        recipient_type: 'partner',
        partner_id: pat.partnerId,
        workspace_id: null,
        program_id: program.id,
        kind: 'commission_refunded',
        title: 'A commission was reduced',
        body: 'A sale you referred in Acme shop was refunded: €5.00 of your commission was taken back.',
      },
      {
        notification_key: `test:${randomBytes(4).toString('hex')}`,
        recipient_type: 'partner',
        partner_id: pat.partnerId,
        workspace_id: null,
        program_id: program.id,
        kind: 'partner_approved',
        title: 'You are approved for Acme shop',
        body: 'Your links work from now on.',
      },
    ]),
  );
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, { as: pat });
  await goto('/partner/');
  const badge = page.getByRole('navigation', { name: 'Portal' }).getByTestId('unread');
  await badge.waitFor();
  t.match(await badge.innerText(), /^2\b/, 'two unread');
  t.match(await badge.innerText(), /2 unread/, 'read out as "2 unread"');
  await page.getByRole('link', { name: /^Notifications/ }).click();
  await page.getByRole('heading', { name: 'Notifications' }).waitFor();
  await page.getByTestId('unread-line').filter({ hasText: '2 unread' }).waitFor();
  await docShot(page, 'portal-notifications');
  await page.getByRole('button', { name: 'Mark read (A commission was reduced)' }).click();
  await page.getByTestId('unread-line').filter({ hasText: '1 unread' }).waitFor();
  await badge.filter({ hasText: '1' }).waitFor();
  await page.getByRole('button', { name: 'Mark all read' }).click();
  await page.getByTestId('unread-line').filter({ hasText: 'Nothing unread.' }).waitFor();
  await badge.waitFor({ state: 'detached' });
  const listed = await getJson(api('/api/partner/notifications?unread=true'), bearer(pat.session));
  t.equal((listed.body.meta as { unread: number }).unread, 0, 'the API agrees: nothing unread');
  assertNoErrors(t);
});

t.test('the payout method: PayPal, then a bank transfer; kept across reloads', async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, { as: pat });
  await goto('/partner/payout-method');
  await page.getByRole('heading', { name: 'Payout method' }).waitFor();
  t.ok(await page.getByLabel('PayPal', { exact: true }).isChecked(), 'PayPal is the first choice');
  await page.getByLabel('PayPal email').fill('pat@paypal.example');
  await page.getByRole('button', { name: 'Save payout method' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `We mailed a notice of the change to ${pat.email}` })
    .waitFor();
  const notice = await queuedMailUrl(sql, svc.prefix, pat.email, 'payout_method_changed');
  t.equal(notice, api('/partner/payout-method'), 'the notice links to this page');
  await page.reload();
  t.equal(await page.getByLabel('PayPal email').inputValue(), 'pat@paypal.example', 'kept');

  await page.getByLabel('Bank transfer').check();
  await page.getByLabel(/Bank details/).fill('Pat Partner\nDE89 3704 0044 0532 0130 00\nCOBADEFFXXX');
  await page.getByRole('button', { name: 'Save payout method' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
  await docShot(page, 'portal-payout-method', { fullPage: false });
  const method = await getJson(api('/api/partner/payout-method'), bearer(pat.session));
  t.match(method.body.data, { type: 'bank_transfer', details: /DE89 3704/ });
  assertNoErrors(t);
});

t.test("payouts' empty state; another partner's program is not shown", async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, { as: pat });
  await goto('/partner/payouts');
  await page.getByText('No payouts yet.').waitFor();

  // Another workspace's program: not this partner's, so not found (the API answers 404 too).
  const other = await signup(svc, { workspace: 'Other' });
  const otherProgram = (
    await postJson(api('/api/advertiser/affiliate-programs'), { name: 'Other shop' }, bearer(other.session))
  ).body.data as { id: number };
  await goto(`/partner/programs/${otherProgram.id}`);
  await page.getByRole('heading', { name: 'Program not found' }).waitFor();
  t.equal(
    (await getJson(api(`/api/partner/programs/${otherProgram.id}/links`), bearer(pat.session))).status,
    404,
  );
  assertNoErrors(t);
});

t.test('the Payouts page shows what is owed: pending with its date, held, approved', async (t) => {
  const [pp] = await sql<{ id: string }[]>`
    select id from partner_programs where partner_id = ${pat.partnerId} and program_id = ${program.id}`;
  await seedCommissions(
    sql,
    { programId: program.id, partnerId: pat.partnerId, partnerProgramId: Number(pp!.id) },
    [
      { saleCents: 10_000, amountCents: 1_234, status: 'pending', payableInDays: 3 },
      // Held for review at creation (its customer has Pat's email).
      { saleCents: 10_000, amountCents: 500, status: 'pending', payableInDays: 1, heldFor: 'self_referral' },
      { saleCents: 10_000, amountCents: 2_000 },
    ],
  );
  // Pending and held also count the commission of the sale above (held for review: its click came from the
  // partner's own address): the page shows the API's sums.
  const mine = (
    (await getJson(api('/api/partner/programs'), bearer(pat.session))).body.data as {
      program: { id: number };
      pending_cents: number;
      held_cents: number;
    }[]
  ).find((p) => p.program.id === program.id)!;
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, { as: pat });
  await goto('/partner/payouts');
  const line = page.getByRole('list', { name: 'Owed, not paid yet' }).getByTestId('owed');
  await line.waitFor();
  const euros = (cents: number) =>
    new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(cents / 100);
  const text = await line.innerText();
  t.match(text, 'Acme shop:');
  t.match(text, `Pending: ${euros(mine.pending_cents)} (payable from `);
  t.match(text, `Held for review (part of pending): ${euros(mine.held_cents)}`);
  t.match(text, `Approved, in the next payout: ${euros(2_000)}`);
  t.ok(mine.pending_cents >= 1_234 + 500 && mine.held_cents >= 500, 'pending and held count the seeded ones');
  await goto(`/partner/programs/${program.id}`);
  t.match(await page.getByTestId('owed').innerText(), `Approved, in the next payout: ${euros(2_000)}`);
  assertNoErrors(t);
});

t.test('every page at 390 px: no sideways scrolling, no console errors', async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    as: pat,
    viewport: phone,
  });
  for (const [path, heading] of [
    ['/partner/', 'Your programs'],
    [`/partner/programs/${program.id}`, 'Acme shop'],
    ['/partner/commissions', 'Commissions'],
    ['/partner/payouts', 'Payouts'],
    ['/partner/notifications', 'Notifications'],
    ['/partner/payout-method', 'Payout method'],
  ] as const) {
    await goto(path);
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    // The list or chart, not its skeleton.
    await page.locator('.skeleton').first().waitFor({ state: 'detached' });
    t.notOk(await pageWiderThanViewport(page), `${path}: no sideways scrolling`);
  }
  await goto(`/partner/programs/${program.id}`);
  await page.getByTestId('tile-clicks').waitFor();
  await docShot(page, 'portal-program-390');
  assertNoErrors(t);
});
