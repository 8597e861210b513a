// The end-to-end test of the partner side, in a real browser against the whole service with real
// mail: the advertiser invites a partner in the dashboard → the invite mail arrives at an SMTP receiver
// started here (the outbox, its relay and the mail worker carry it) → the partner follows the mail's link,
// sets a password, sees the program and copies a link → a click on that link and a sale through the API →
// the partner's chart and commissions show it → the advertiser marks the commission paid and it is
// refunded → the partner's notification appears (and is mailed), and the advertiser's bell shows the
// manual-review warning for the paid commission. No console errors on any page.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { startSmtpSink } from '../helpers/smtp.ts';
import { docShot, openPortal, pathOf } from '../helpers/portal.ts';

const sink = await startSmtpSink(t);
const svc = await startServices(
  t,
  [
    'web',
    'click-worker',
    'attribution-worker',
    'reversal-worker',
    'ledger-worker',
    'notification-worker',
    'outbox-relay',
    'mail-worker',
  ],
  { SMTP_URL: sink.url },
);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);

const owner = await signup(svc, { workspace: 'Acme' });
const created = await postJson(
  api('/api/advertiser/affiliate-programs'),
  {
    name: 'Acme shop',
    currency: 'EUR',
    allowed_origins: ['https://shop.example'],
    commission: { type: 'percentage', percent: 30 },
  },
  bearer(owner.session),
);
if (created.status !== 201) throw new Error(`program: ${JSON.stringify(created.body)}`);
const program = created.body.data as { id: number; api_token: string };
await postJson(api(`/api/advertiser/affiliate-programs/${program.id}/go-live`), {}, bearer(owner.session));
const partnerEmail = `jane-${randomBytes(3).toString('hex')}@partners.example`;

t.test('invite → mail → portal → click and sale → chart → paid, refunded → both notified', async (t) => {
  // The advertiser adds the partner in the dashboard: the invite link is shown once and mailed.
  const adv = await openPage(t, browser, svc.baseUrl, { user: owner });
  await adv.goto(`/programs/${program.id}/partners`);
  await adv.page.getByLabel('Name').fill('Jane Partner');
  await adv.page.getByLabel('Email').fill(partnerEmail);
  await adv.page.getByRole('button', { name: 'Add partner' }).click();
  const once = adv.page.locator('.shown-once');
  await once.waitFor();
  const shown = (await once.getByTestId('secret').innerText()).trim();

  const invite = await sink.waitForMail((m) => m.to.includes(partnerEmail), 120_000);
  const link = invite.links.find((l) => l.includes('/partner/invite#pinv_'));
  t.ok(link, `the mail holds the invite link (${invite.subject})`);
  t.equal(link, shown, 'the same link the dashboard showed once');
  t.match(invite.text, /Acme shop/, 'the mail names the program');
  t.match(invite.html, /href="[^"]*\/partner\/invite#pinv_/, 'and links it in the HTML body');
  await once.getByRole('button', { name: 'Done' }).click();

  // The partner follows the mail's link, sets a password, sees the program and copies a link.
  const partner = await openPortal(t, browser, svc.baseUrl, { clipboard: true });
  const page = partner.page;
  await partner.goto(pathOf(link!));
  await page.getByRole('heading', { name: 'Accept your invite' }).waitFor();
  await page.getByLabel('Your name').fill('Jane Partner');
  await page.getByLabel('Password').fill('jane partner password');
  await page.getByRole('button', { name: 'Accept invite' }).click();
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  await page.getByRole('link', { name: 'Acme shop', exact: true }).click();
  await page.getByRole('heading', { name: 'Your links' }).waitFor();
  const links = page.locator('.link-list li').or(page.getByText('You have no link in this program yet.'));
  await links.first().waitFor();
  if ((await page.locator('.link-list li').count()) === 0) {
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.locator('.link-list li').first().waitFor();
  }
  const landing = page.getByLabel('Page the links lead to');
  if (!(await landing.inputValue())) await landing.fill('https://shop.example/');
  await page.locator('.link-list li').first().getByRole('button', { name: 'Copy link' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  const referral = await page.evaluate<string>('navigator.clipboard.readText()');
  t.match(referral, /^https:\/\/shop\.example\/\?aff=[\w-]+$/, `copied ${referral}`);

  // A click on that link and a sale through the API. The visitor clicks from an address of their own: a
  // click from the partner's sign-in address (127.0.0.1 here) would hold the commission for review.
  const clickId = await waitFor('a click on the copied link', async () => {
    const r = await postJson(
      api('/api/v1/track/click'),
      { affiliate_url: referral },
      { 'x-forwarded-for': '198.51.100.23' },
    );
    return r.status === 200 && r.body.success === true ? (r.body.click_id as string) : null;
  });
  const order = `order-${randomBytes(4).toString('hex')}`;
  const sale = await waitFor(
    'the sale answered',
    async () => {
      const r = await postJson(
        api('/api/v1/track/sale'),
        { transaction_id: order, amount_cents: 20_000, click_id: clickId },
        { ...bearer(program.api_token), 'idempotency-key': order },
      );
      return r.status === 503 ? null : r;
    },
    60_000,
    500,
  );
  t.equal(sale.status, 200, JSON.stringify(sale.body));
  const commissionId = (sale.body as { commission_id?: number }).commission_id;

  // The partner's chart and commissions show it.
  await waitFor(
    "the sale in the partner's chart",
    async () => {
      await page.reload();
      await page.getByTestId('tile-earnings').waitFor();
      return (
        (await page.getByTestId('tile-clicks').innerText()) === '1' &&
        (await page.getByTestId('tile-conversions').innerText()) === '1'
      );
    },
    90_000,
    1000,
  );
  t.equal((await page.getByTestId('tile-earnings').innerText()).replace(/\s/g, ''), '€60.00');
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Commissions' }).click();
  const row = page.locator('tr[data-commission]');
  await row.first().waitFor();
  t.match(await row.innerText(), /Acme shop\s+€200\.00\s+€60\.00/);

  // The advertiser marks it paid; then the sale is refunded in full.
  const listed = await getJson(
    api(`/api/advertiser/affiliate-programs/${program.id}/commissions`),
    bearer(owner.session),
  );
  const [commission] = listed.body.data as { id: number }[];
  if (commissionId !== undefined) t.equal(commission!.id, commissionId);
  const paid = await postJson(
    api(`/api/advertiser/commissions/${commission!.id}/mark-paid`),
    {},
    bearer(owner.session),
  );
  t.equal(paid.status, 200, JSON.stringify(paid.body));
  const refund = await waitFor(
    'the refund answered',
    async () => {
      const r = await postJson(
        api('/api/v1/track/refund'),
        { transaction_id: order },
        { ...bearer(program.api_token), 'idempotency-key': `refund-${order}` },
      );
      return r.status === 503 ? null : r;
    },
    60_000,
    500,
  );
  t.equal(refund.status, 200, JSON.stringify(refund.body));

  // The partner's notification appears (the unread count, then the page), and it is mailed.
  await waitFor(
    "the partner's unread notification",
    async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Commissions' }).waitFor();
      return (await page.getByRole('navigation', { name: 'Portal' }).getByTestId('unread').count()) === 1;
    },
    90_000,
    1000,
  );
  await page.getByRole('link', { name: /^Notifications/ }).click();
  const note = page.locator('ul.notifications li.unread');
  await note.first().waitFor();
  t.match(await note.first().innerText(), /refund/i, 'the refund notification');
  await docShot(page, 'portal-refund-notification');
  const mailed = await sink.waitForMail(
    (m) => m.to.includes(partnerEmail) && m.links.some((l) => l.endsWith('/partner/notifications')),
    120_000,
  );
  t.match(mailed.text, /refund/i, 'the refund notification was mailed too');

  // The advertiser's bell shows the warning for the paid commission.
  await waitFor(
    'the advertiser bell',
    async () => {
      await adv.page.reload();
      await adv.page.getByRole('heading', { name: 'Partners' }).waitFor();
      return (
        (await adv.page
          .getByRole('link', { name: /^Notifications/ })
          .getByTestId('unread')
          .count()) === 1
      );
    },
    90_000,
    1000,
  );
  await adv.page.getByRole('link', { name: /^Notifications/ }).click();
  const warning = adv.page.locator('ul.notifications li.warning[data-kind="paid_commission_refunded"]');
  await warning.waitFor();
  t.match(await warning.innerText(), /paid/i, 'the manual-review warning: a paid commission was refunded');
  await docShot(adv.page, 'dashboard-paid-refund-warning');

  partner.assertNoErrors(t, 'partner: no console errors');
  adv.assertNoErrors(t, 'advertiser: no console errors');
});
