// The advertiser's side of the partner portal in the dashboard, in a real browser against the real
// service: the program's partner settings (public page, description) with a link to the public page; adding
// a partner shows its invite link once (and says it was mailed), "Send invite" issues a new one; pending
// applications approved and rejected with a reason; the bell's unread count and the notifications page
// (mark read, mark all read); at 1280 and 390 px, no console errors.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { focusWhenShown, launchBrowser, openPage } from '../helpers/browser.ts';
import { docShot, pageWiderThanViewport } from '../helpers/portal.ts';
import { deliverNotifications } from '../helpers/notifications.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);
const uniq = () => randomBytes(3).toString('hex');

const owner = await signup(svc, { workspace: 'Acme' });
const slug = `beans-${uniq()}`;
const created = await postJson(
  api('/api/advertiser/affiliate-programs'),
  { name: 'Bean Shop', slug, currency: 'EUR' },
  bearer(owner.session),
);
if (created.status !== 201) throw new Error(`program: ${JSON.stringify(created.body)}`);
const program = created.body.data as { id: number };
await postJson(api(`/api/advertiser/affiliate-programs/${program.id}/go-live`), {}, bearer(owner.session));
const partnersPage = `/programs/${program.id}/partners`;

t.test('the program form: public page and description; the card links to the page', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: owner });
  await goto('/programs');
  const card = page.locator('.card', { hasText: 'Bean Shop' });
  await card.getByRole('button', { name: 'Edit' }).click();
  const form = page.getByRole('form', { name: 'Edit Bean Shop' });
  await form.getByLabel(/Public page/).check();
  await form.getByLabel(/Description/).fill('Coffee for people who care.\nEarn 20% on every order.');
  t.ok(await form.getByLabel('Partners may create their own links').isChecked(), 'own links: on by default');
  // Codes (docs/codes.md): where full referral links point, and a code beating a click.
  await form.getByLabel(/Website URL/).fill('https://bean.example/shop');
  await form.getByLabel(/Partner codes/).selectOption('override');
  await form.getByRole('button', { name: 'Save changes' }).click();
  const link = card.getByRole('link', { name: `${svc.baseUrl}/p/${slug}` });
  await link.waitFor();
  t.match(await card.innerText(), /reviewed on the Partners page/);
  t.match(await card.innerText(), /https:\/\/bean\.example\/shop[\s\S]*win over clicks/);
  const read = await getJson(api(`/api/advertiser/affiliate-programs/${program.id}`), bearer(owner.session));
  t.match(read.body.data, {
    public_page: true,
    auto_approve: false,
    partner_links: true,
    description: 'Coffee for people who care.\nEarn 20% on every order.',
    website_url: 'https://bean.example/shop',
    code_attribution: 'override',
  });
  t.equal((await getJson(api(`/api/public/programs/${slug}`))).status, 200, 'the public page is open');
  assertNoErrors(t);
});

t.test('adding a partner shows the invite link once; a new invite replaces it', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    clipboard: true,
  });
  await goto(partnersPage);
  await page.getByRole('heading', { name: 'Partners' }).waitFor();
  await page.getByLabel('Name').fill('Jane Partner');
  await page.getByLabel('Email').fill('jane@partners.example');
  const focusAtInvite = await focusWhenShown(page, '.shown-once');
  await page.getByRole('button', { name: 'Add partner' }).click();
  const once = page.locator('.shown-once');
  await once.waitFor();
  t.match(await focusAtInvite(), /Invite link for Jane Partner/, 'the invite link takes the focus');
  t.match(await once.innerText(), /also mailed to jane@partners\.example/);
  const first = (await once.getByTestId('secret').innerText()).trim();
  t.match(first, new RegExp(`^${svc.baseUrl}/partner/invite#pinv_`));
  await once.getByRole('button', { name: 'Copy' }).click();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), first);
  await docShot(page, 'dashboard-invite-once');
  await once.getByRole('button', { name: 'Done' }).click();
  t.notOk((await page.content()).includes(first), 'gone from the page');

  const row = page.getByRole('row', { name: /Jane Partner/ });
  await row.getByRole('button', { name: /^Re-send invite/ }).click();
  await once.waitFor();
  const second = (await once.getByTestId('secret').innerText()).trim();
  t.not(second, first, 'a new link');
  await once.getByRole('button', { name: 'Done' }).click();
  // The first link died with the new one (CONTRACT: the older dies).
  const old = await postJson(api('/api/partner/auth/accept-invite'), {
    token: first.split('/').pop(),
    password: 'jane partner password',
  });
  t.equal(old.status, 400, 'the older invite is refused');
  assertNoErrors(t);
});

t.test('applications: approve one, reject one with a reason', async (t) => {
  for (const [name, email] of [
    ['Ana Applicant', `ana-${uniq()}@blog.example`],
    ['Rob Rejected', `rob-${uniq()}@spam.example`],
  ] as const) {
    const r = await postJson(api(`/api/public/programs/${slug}/apply`), { name, email });
    t.equal(r.status, 201, JSON.stringify(r.body));
  }
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: owner });
  await goto(partnersPage);
  const ana = page.getByRole('row', { name: /Ana Applicant/ });
  const rob = page.getByRole('row', { name: /Rob Rejected/ });
  await ana.locator('.badge.pending').waitFor();
  await rob.locator('.badge.pending').waitFor();
  await docShot(page, 'dashboard-partners-review');

  await ana.getByRole('button', { name: 'Approve Ana Applicant' }).click();
  await ana.locator('.badge.approved').waitFor();
  t.equal(await ana.getByRole('button', { name: /^Approve/ }).count(), 0, 'approved: no Approve button');

  const focusAtReason = await focusWhenShown(page, 'form.confirm');
  await rob.getByRole('button', { name: 'Reject Rob Rejected' }).click();
  t.equal(await focusAtReason(), '', 'the reason form opens with the focus in its (empty) input');
  await page.keyboard.press('Escape');
  await rob.getByRole('button', { name: 'Reject Rob Rejected' }).waitFor();
  t.equal(await rob.locator('.badge.pending').count(), 1, 'Escape: nothing rejected');
  await rob.getByRole('button', { name: 'Reject Rob Rejected' }).click();
  await rob.getByLabel(/Reason/).fill('Not a fit for our audience');
  await rob.getByRole('button', { name: 'Yes, reject Rob Rejected' }).click();
  await rob.locator('.badge.rejected').waitFor();

  const listed = await getJson(
    api(`/api/advertiser/affiliate-programs/${program.id}/partners`),
    bearer(owner.session),
  );
  const byName = new Map(
    (listed.body.data as { name: string; status: string; rejection_reason: string | null }[]).map((p) => [
      p.name,
      p,
    ]),
  );
  t.equal(byName.get('Ana Applicant')?.status, 'approved');
  t.equal(byName.get('Rob Rejected')?.status, 'rejected');
  t.equal(byName.get('Rob Rejected')?.rejection_reason, 'Not a fit for our audience', 'the reason was sent');
  const links = await getJson(
    api(
      `/api/advertiser/affiliate-programs/${program.id}/partners/${
        (listed.body.data as { id: number; name: string }[]).find((p) => p.name === 'Ana Applicant')!.id
      }/links`,
    ),
    bearer(owner.session),
  );
  t.equal((links.body.data as unknown[]).length, 1, 'approving created a link');
  assertNoErrors(t);
});

t.test('the bell: unread count, the notifications page, mark read and mark all read', async (t) => {
  // The notification worker's part (the notifications are outbox rows: test/helpers/notifications.ts).
  await deliverNotifications(sql, svc.prefix, svc.baseUrl);
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: owner });
  await goto('/programs');
  const bell = page.getByRole('link', { name: /^Notifications/ });
  const count = bell.getByTestId('unread');
  await count.waitFor();
  const unread = Number((await count.innerText()).match(/^\d+/)![0]);
  t.ok(unread >= 2, `the two applications are unread (${unread})`);
  await bell.click();
  await page.getByRole('heading', { name: 'Notifications' }).waitFor();
  await page
    .getByTestId('unread-line')
    .filter({ hasText: `${unread} unread` })
    .waitFor();
  t.match(await page.locator('ul.notifications').innerText(), /Ana Applicant/);
  await docShot(page, 'dashboard-notifications');
  await page
    .getByRole('button', { name: /^Mark read/ })
    .first()
    .click();
  await page
    .getByTestId('unread-line')
    .filter({ hasText: `${unread - 1} unread` })
    .waitFor();
  await count.filter({ hasText: String(unread - 1) }).waitFor();
  await page.getByRole('button', { name: 'Mark all read' }).click();
  await page.getByTestId('unread-line').filter({ hasText: 'Nothing unread.' }).waitFor();
  await count.waitFor({ state: 'detached' });
  assertNoErrors(t);
});

t.test('390 px: the Partners and Notifications pages fit', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    viewport: { width: 390, height: 844 },
  });
  await goto(partnersPage);
  await page.getByRole('row', { name: /Ana Applicant/ }).waitFor();
  t.notOk(await pageWiderThanViewport(page), 'Partners: no sideways scrolling');
  await page.getByRole('link', { name: /^Notifications/ }).click();
  await page.getByRole('heading', { name: 'Notifications' }).waitFor();
  await page.locator('ul.notifications').waitFor();
  t.notOk(await pageWiderThanViewport(page), 'Notifications: no sideways scrolling');
  assertNoErrors(t);
});
