// Settings → Webhooks in a real browser against the real service: add an endpoint for some events and a
// program (the secret shown once, with the focus on it), a refused URL's message, send a test that a
// receiver verifies with the standardwebhooks library, the delivery log with its payload, a retry, a
// rotation (the new secret shown once), disable, enable, delete; a member sees no webhooks; no console
// errors; nothing scrolls sideways at 390 px. Screenshots in test/screenshots/ (git-ignored).
import t from 'tap';
import { postJson, startServices, ownDatabase, waitFor } from '../helpers/stack.ts';
import { bearer, memberOf, signup } from '../helpers/accounts.ts';
import { focusWhenShown, launchBrowser, openPage, screenshot, settled } from '../helpers/browser.ts';
import type { BrowserTest, PageOptions } from '../helpers/browser.ts';
import type { User } from '../helpers/accounts.ts';
import { startReceiver, verify } from '../helpers/webhook-receiver.ts';

const db = await ownDatabase(t);
const sql = db.sql;
const receiver = await startReceiver(t, { https: false });
const svc = await startServices(t, ['web', 'outbox-relay', 'webhook-worker'], {
  ...db.env,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '200',
  OUTBOX_POLL_MS: '200',
});
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);
const owner = await signup(svc, { workspace: 'Hooks' });
const created = await postJson(
  api('/api/advertiser/affiliate-programs'),
  { name: 'Hook shop' },
  bearer(owner.session),
);
const program = created.body.data as { id: number };

const openAs = (t: BrowserTest, user: Pick<User, 'email'>, opts: PageOptions = {}) =>
  openPage(t, browser, svc.baseUrl, { viewport: { width: 1280, height: 900 }, user, ...opts });

t.test('owner: add, test, read the log, retry, rotate, disable, enable, delete', async (t) => {
  const { page, assertNoErrors } = await openAs(t, owner, {
    // The refused URL below is answered 400 on purpose.
    allowStatus: [{ status: 400, url: /\/api\/advertiser\/webhooks$/ }],
  });
  await page.goto(api('/settings'));
  const hooks = page.locator('#webhooks');
  await hooks.getByRole('heading', { name: 'Webhooks' }).waitFor();
  await hooks.getByText('No webhook endpoints yet.').waitFor();
  // The form's program list and the sections above it loaded: nothing moves the button clicked next.
  await hooks.getByLabel('Hook shop').waitFor();
  await settled(page);

  // A URL the API refuses: its message beside the form.
  await hooks.getByLabel('URL').fill('ftp://files.example/hook');
  await hooks.getByRole('button', { name: 'Add endpoint' }).click();
  await hooks.getByRole('alert').filter({ hasText: 'url must be an http:// or https:// URL' }).waitFor();

  const url = `${receiver.url}/dashboard`;
  await hooks.getByLabel('URL').fill(url);
  await hooks.getByLabel('Description (optional)').fill('CRM sync');
  await hooks.getByLabel('All events').uncheck();
  await hooks.getByLabel('commission.created').uncheck();
  await hooks.getByLabel('sale.refunded').check();
  await hooks.getByLabel('Hook shop').check();
  const focusAtSecret = await focusWhenShown(page, '.shown-once');
  await hooks.getByRole('button', { name: 'Add endpoint' }).click();
  const once = hooks.locator('.shown-once');
  await once.waitFor();
  t.match(await focusAtSecret(), /you will not see it again/, 'the secret shows with the focus on it');
  const secret = (await once.locator('code').innerText()).trim();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  await screenshot(page, 'webhooks-secret-shown');
  await once.getByRole('button', { name: 'Done' }).click();
  t.notOk((await page.content()).includes(secret), 'the secret is gone from the page');

  const row = hooks.locator('tr[data-endpoint]');
  await row.waitFor();
  t.match(
    await row.innerText(),
    /CRM sync[\s\S]*sale\.created, sale\.refunded[\s\S]*Hook shop[\s\S]*enabled/,
  );
  const [ep] = await sql<{ id: string; events: string[]; program_ids: string[] }[]>`
    select id, events, program_ids from webhook_endpoints where workspace_id = ${owner.workspaceId}`;
  t.same([ep!.events, ep!.program_ids.map(Number)], [['sale.created', 'sale.refunded'], [program.id]]);

  // A test event: delivered, verified with the secret, in the log with its payload.
  await row.getByRole('button', { name: /^Send test/ }).click();
  await hooks.getByRole('status').filter({ hasText: 'A test event is on its way' }).waitFor();
  await waitFor('the test delivery', async () => receiver.received.length >= 1, 60_000);
  t.match(verify(secret, receiver.received[0]!), { type: 'webhook.test', data: { is_test: true } });
  const log = hooks.locator('.deliveries');
  await waitFor(
    'the delivery shown delivered',
    async () => {
      await log.getByRole('button', { name: 'Refresh' }).click();
      return (await log.locator('tr[data-delivery] .badge').allInnerTexts()).includes('delivered');
    },
    30_000,
    500,
  );
  const delivery = log.locator('tr[data-delivery]').first();
  t.match(await delivery.innerText(), /webhook\.test[\s\S]*delivered[\s\S]*\b1\b[\s\S]*204/);
  await delivery.locator('summary').click();
  t.match(await delivery.locator('pre.payload').first().innerText(), /"type": "webhook.test"/);
  await screenshot(page, 'webhooks-log');

  await delivery.getByRole('button', { name: /^Retry/ }).click();
  await log.getByRole('status').filter({ hasText: 'is attempted again now' }).waitFor();
  await waitFor('the retried attempt', async () => receiver.received.length >= 2, 60_000);
  t.equal(receiver.received[1]!.headers['webhook-id'], receiver.received[0]!.headers['webhook-id']);

  // Rotate: a new secret shown once, the old one signing for 24 hours.
  await row.getByRole('button', { name: 'Rotate secret' }).click();
  await row.getByRole('button', { name: 'Yes, rotate' }).click();
  await once.waitFor();
  const rotated = (await once.locator('code').innerText()).trim();
  t.not(rotated, secret);
  t.match(await once.innerText(), /previous secret also signs every delivery until/);
  await once.getByRole('button', { name: 'Done' }).click();

  await row.getByRole('button', { name: /^Disable/ }).click();
  await row.getByText('disabled by hand').waitFor();
  await row.getByRole('button', { name: /^Enable/ }).click();
  await row.locator('.badge', { hasText: 'enabled' }).waitFor();

  await row.getByRole('button', { name: 'Delete' }).click();
  await row.getByRole('button', { name: 'Yes, delete' }).click();
  await hooks.getByText('No webhook endpoints yet.').waitFor();
  t.equal(
    Number(
      (
        await sql`select count(*)::int as n from webhook_endpoints where workspace_id = ${owner.workspaceId}`
      )[0]!.n,
    ),
    0,
  );
  assertNoErrors(t, 'no console errors');
});

t.test('a member sees no webhooks', async (t) => {
  const member = await memberOf(svc, sql, owner.workspaceId, 'member');
  const { page, assertNoErrors } = await openAs(t, member);
  await page.addInitScript((ws) => localStorage.setItem('svc.workspace', String(ws)), owner.workspaceId);
  await page.goto(api('/settings'));
  await page.getByText('Only owners and admins of this workspace see and manage its webhooks.').waitFor();
  t.equal(await page.locator('#webhooks button, #webhooks input').count(), 0, 'no controls');
  assertNoErrors(t, 'no console errors (the section never asks the API)');
});

t.test('usable at 390 px', async (t) => {
  await postJson(
    api('/api/advertiser/webhooks'),
    {
      url: `${receiver.url}/a-rather-long-path/that/should/wrap/on/a/phone?and=a&query=string`,
      description: 'Phone',
    },
    bearer(owner.session),
  );
  const { page, assertNoErrors } = await openAs(t, owner, { viewport: { width: 390, height: 844 } });
  await page.goto(api('/settings#webhooks'));
  await page.locator('#webhooks tr[data-endpoint]').waitFor();
  await page
    .locator('#webhooks')
    .getByRole('button', { name: /^Deliveries/ })
    .click();
  await page.locator('#webhooks .deliveries').waitFor();
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - innerWidth');
  t.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await screenshot(page, 'webhooks-390');
  assertNoErrors(t, 'no console errors');
});
