// The dashboard in a real browser (Debian's chromium through playwright-core) against the real service:
// sign up → create a program (its token shown once) → a partner and a link (through the API: those pages
// are tested with Partners) → a page with the tracker records a click → Events lists it → Overview's tiles
// and chart include it → a sale through the API → Integration's test buttons turn the steps complete. No
// page may log a console error. Also: a viewer is offered no write action, and /docs renders the OpenAPI
// document without a login.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { PASSWORD, bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import { focusWhenShown, launchBrowser, openPage, screenshot } from '../helpers/browser.ts';
import type { BrowserTest, PageOptions } from '../helpers/browser.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker', 'ledger-worker']);
const base = svc.baseUrl;
const url = (p: string) => `${base}${p}`;

// The advertiser's site: another origin, serving one page with the tracker snippet.
let programId = 0;
const site = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(
    `<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1>` +
      `<script src="${url('/js/svc-tracker.js')}" data-program-id="${programId}"></script></body></html>`,
  );
});
await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
t.teardown(() => site.close());
const siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

const browser = await launchBrowser(t);

/** A page on the service, and a screenshot of it under test/screenshots/dashboard-<name>.png. */
async function open(t: BrowserTest, opts: PageOptions) {
  const p = await openPage(t, browser, base, opts);
  return {
    ...p,
    shot: (name: string, opts?: { fullPage?: boolean }) => screenshot(p.page, `dashboard-${name}`, opts),
  };
}

t.test(
  'sign up, create a program, track a click, see it in Events and Overview, complete Integration',
  async (t) => {
    const { page, shot, assertNoErrors } = await open(t, { viewport: { width: 1280, height: 900 } });
    const email = `flow-${Date.now()}@example.com`;

    // Sign up.
    await page.goto(url('/signup'));
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Workspace name').fill('Flow shop');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Programs' }).waitFor();
    await page.getByText('No programs in this workspace yet').waitFor();
    t.equal(await page.title(), 'Programs · svc', 'each page has its own title');
    await shot('programs-empty');

    // Create a program: the token is shown once, with the warning and a copy button.
    await page.getByRole('button', { name: 'New program' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Flow Program');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByLabel('Allowed origins').fill(siteOrigin);
    await page.getByRole('button', { name: 'Add a product rule' }).click();
    await page.getByLabel('Product id (rule 1)').fill('annual');
    await page.getByRole('button', { name: 'Create program' }).click();
    const secret = page.getByTestId('secret');
    await secret.waitFor();
    let token = (await secret.textContent())!.trim();
    t.match(token, /^aff_/, 'the full tracking token is shown');
    t.ok(await page.getByText('you will not see it again').isVisible());
    t.ok(await page.getByRole('button', { name: 'Copy', exact: true }).isVisible());
    await shot('programs-token-once');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    t.equal(await page.getByText(token).count(), 0, 'dismissed, the token is gone');
    await page.reload();
    await page.getByRole('heading', { name: 'Flow Program' }).waitFor();
    t.equal(await page.getByText(token).count(), 0, 'and it is never shown again');
    const [program] = await sql<{ id: string; currency: string; commission: { product_rules: unknown[] } }[]>`
    select id, currency, commission from programs where name = 'Flow Program' and deleted_at is null`;
    programId = Number(program!.id);
    t.equal(program!.currency, 'EUR');
    t.equal(program!.commission.product_rules.length, 1, 'the product rule was saved');
    await page.getByRole('button', { name: 'Go live' }).click();
    await page.getByText('Live', { exact: true }).waitFor();

    // Edit: the form comes filled in; the change is saved.
    await page.getByRole('button', { name: 'Edit' }).click();
    t.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Flow Program');
    await page.getByLabel('Attribution window (days)').fill('30');
    await page.getByRole('button', { name: 'Save changes' }).click();
    // The attribution window's own fact: the payout hold (30 days by default) shows "30 days" too, so a bare
    // text match held before the save landed and failed once both showed it.
    await page.locator('dt:text-is("Attribution window") + dd:text-is("30 days")').waitFor();

    // Regenerate asks first, then shows the new token once; the old one is refused from then on.
    await page.getByRole('button', { name: 'Regenerate token' }).click();
    await page.getByRole('button', { name: 'Yes, regenerate token' }).click();
    await waitFor('the new token', async () => {
      const shown = (await secret.textContent())?.trim();
      return shown && shown !== token ? shown : null;
    });
    const oldToken = token;
    token = (await secret.textContent())!.trim();
    t.match(token, /^aff_/, 'the regenerated token is shown');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await waitFor('the old token refused', async () => {
      const r = await postJson(
        url('/api/v1/track/sale'),
        { transaction_id: 'x', amount_cents: 1 },
        bearer(oldToken),
      );
      return r.status === 401;
    });
    await shot('programs');

    // A partner and a link through the API, with the browser's own session.
    const session = (await page.context().cookies()).find((c) => c.name === 'svc_session')!.value;
    const partner = await postJson(
      url(`/api/advertiser/affiliate-programs/${programId}/partners`),
      { name: 'Pat Partner', email: `pat-${Date.now()}@example.com` },
      bearer(session),
    );
    t.equal(partner.status, 201, JSON.stringify(partner.body));
    const partnerId = (partner.body.data as { partner: { id: number } }).partner.id;
    const link = await postJson(
      url(`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/links`),
      {},
      bearer(session),
    );
    t.equal(link.status, 201, JSON.stringify(link.body));
    const shortLink = (link.body.data as { short_link: string }).short_link;

    // The shop's page with the tracker records the click (in its own tab: another origin).
    const shop = await page.context().newPage();
    await shop.goto(`${siteOrigin}/pricing?aff=${shortLink}`);
    const clickId = await waitFor('the tracker cookie', async () => {
      const c = (await shop.context().cookies(siteOrigin)).find((x) => x.name === 'svc_click_id');
      return c?.value;
    });
    await shop.close();

    // Events lists it, with device and place, and the DB-IP credit.
    await page.goto(url(`/programs/${programId}/events`));
    await page.getByRole('heading', { name: /Events/ }).waitFor();
    await waitFor('the click in Events', async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForLoadState('networkidle');
      return (await page.locator('table.events tbody tr').count()) > 0;
    });
    const row = page.locator('table.events tbody tr').first();
    t.match(await row.textContent(), /Click/);
    t.match(await row.textContent(), new RegExp(`pricing\\?aff=${shortLink}`), 'the page URL');
    t.match(await row.locator('td').nth(3).textContent(), /desktop|Chrome|Linux/i, 'device and browser');
    t.equal(
      await page.getByRole('link', { name: 'IP Geolocation by DB-IP' }).getAttribute('href'),
      'https://db-ip.com',
    );
    await shot('events');

    // Overview: the Clicks tile and the chart's last day (hovered: the legend shows its values).
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByTestId('tile-clicks').waitFor();
    await waitFor('the click in Overview', async () => {
      await page.getByRole('button', { name: '7 days' }).click();
      await page.waitForLoadState('networkidle');
      return (await page.getByTestId('tile-clicks').textContent()) === '1';
    });
    const chart = page.locator('figure.chart').first();
    const over = chart.locator('.u-over');
    // Hovering the last day shows its values in the legend (retried: a reload redraws the chart).
    const lastDay = await waitFor('the legend of the last day', async () => {
      const box = await over.boundingBox();
      if (!box) return null;
      await over.hover({ position: { x: box.width - 2, y: box.height / 2 } });
      const v = await chart.locator('.u-series', { hasText: 'Clicks' }).locator('.u-value').textContent();
      return v && v !== '—' ? v : null;
    });
    t.equal(lastDay, '1', "the chart's last day (today, UTC) has the click");
    await page.getByText('Daily figures as a table').click();
    const today = new Date().toISOString().slice(0, 10);
    t.match(await page.getByRole('row', { name: new RegExp(today) }).textContent(), new RegExp(`${today}1`));

    // A sale through the API: Overview's revenue follows.
    const sale = await postJson(
      url('/api/v1/track/sale'),
      {
        transaction_id: `flow-${Date.now()}`,
        amount_cents: 4900,
        currency: 'EUR',
        click_id: decodeURIComponent(clickId),
      },
      bearer(token),
    );
    t.equal(sale.status, 200, JSON.stringify(sale.body));
    await waitFor('the sale in Overview', async () => {
      await page.getByRole('button', { name: '30 days' }).click();
      await page.waitForLoadState('networkidle');
      return (await page.getByTestId('tile-revenue').textContent())?.includes('49.00');
    });
    t.equal(await page.getByTestId('tile-conversions').textContent(), '1');
    await shot('overview');

    // Integration: the test buttons turn the first two steps complete; the processor connection the third.
    await page.getByRole('link', { name: 'Integration' }).click();
    await page.getByRole('heading', { name: 'Setup steps' }).waitFor();
    t.match(await page.getByTestId('step-page-view').textContent(), /Not yet/);
    t.match(
      await page.locator('pre').first().textContent(),
      `<script src="${base}/js/svc-tracker.js" data-program-id="${programId}"></script>`,
      'the snippet carries the program id',
    );
    await page.getByRole('button', { name: 'Send a test page view' }).click();
    await page
      .getByTestId('step-page-view')
      .getByText('Complete', { exact: true })
      .waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Send a test referral' }).click();
    await page
      .getByTestId('step-referrals')
      .getByText('Complete', { exact: true })
      .waitFor({ timeout: 30_000 });
    const pc = await send(
      'PUT',
      url('/api/advertiser/processor-connection'),
      { status: 'connected', account_id: 'acct_flow' },
      bearer(session),
    );
    t.equal(pc.status, 200, pc.text);
    await page.getByRole('button', { name: 'Check again' }).click();
    await page
      .getByTestId('step-payments')
      .getByText('Complete', { exact: true })
      .waitFor({ timeout: 30_000 });
    await shot('integration');

    // Events' type filter: the sale alone, then the click alone.
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByText('2 events').waitFor();
    await page.getByLabel('Type').selectOption('conversion');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await page.getByText('1 event', { exact: true }).waitFor();
    t.match(await page.locator('table.events tbody').textContent(), /Sale€49\.00/, 'only the sale');
    await page.getByLabel('Type').selectOption('click');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await page.locator('table.events tbody tr', { hasText: 'Click' }).waitFor();
    t.equal(await page.locator('table.events tbody tr').count(), 1, 'only the click');

    assertNoErrors(t, 'no console errors on any page');
  },
);

t.test('a viewer is offered no write action', async (t) => {
  const owner = await getJson(url('/api/auth/session'));
  t.same(owner.body, { data: null }, 'no ambient session outside the browser');
  const [ws] = await sql<
    { workspace_id: string }[]
  >`select workspace_id from programs where id = ${programId}`;
  const viewer = await memberOf(svc, sql, Number(ws!.workspace_id), 'viewer');
  await sql`delete from memberships where user_id = ${viewer.userId} and workspace_id <> ${ws!.workspace_id}`;
  const { page, shot, assertNoErrors } = await open(t, {
    viewport: { width: 390, height: 844 },
    // The Events page opened directly by a viewer: the API's 403, shown as a message.
    allowStatus: [{ status: 403, url: /\/api\/tracking\/events\/\d+$/ }],
  });
  await page.goto(url('/login'));
  await page.getByLabel('Email').fill(viewer.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Flow Program' }).waitFor();
  for (const name of ['New program', 'Edit', 'Go live', 'Regenerate token', 'Delete']) {
    t.equal(await page.getByRole('button', { name }).count(), 0, `no ${name} button`);
  }
  await shot('programs-viewer-390');
  await page.goto(url(`/programs/${programId}/integration`));
  await page.getByRole('heading', { name: 'Setup steps' }).waitFor();
  t.equal(await page.getByRole('button', { name: /Send a test/ }).count(), 0, 'no test-event buttons');
  t.equal(
    await page.getByRole('navigation', { name: 'Program' }).getByRole('link', { name: 'Events' }).count(),
    0,
    'no Events page (it needs tracking:list)',
  );
  await page.goto(url(`/programs/${programId}/events`));
  await page.getByRole('alert').waitFor();
  t.match(
    await page.getByRole('alert').textContent(),
    /permission|not allowed|forbidden|lacks/i,
    'a 403 is a message, not a blank page',
  );
  await shot('events-viewer-390');
  assertNoErrors(t, 'no console errors but the 403 of the page opened directly');
});

t.test('Delete asks first; Cancel keeps the program, Yes deletes it', async (t) => {
  const owner = await signup(svc);
  const made = await postJson(
    url('/api/advertiser/affiliate-programs'),
    { name: 'Doomed', workspace_id: owner.workspaceId },
    bearer(owner.session),
  );
  t.equal(made.status, 201);
  const id = (made.body.data as { id: number }).id;
  const { page, shot, assertNoErrors } = await open(t, {
    viewport: { width: 390, height: 844 },
    // The refused create below, on purpose.
    allowStatus: [{ status: 409, url: /\/api\/advertiser\/affiliate-programs$/ }],
  });
  // By keyboard alone: type, Tab to the next field, Enter submits.
  await page.goto(url('/login'));
  await page.getByLabel('Email').focus();
  await page.keyboard.type(owner.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Doomed' }).waitFor();
  t.equal(
    await page.evaluate('document.documentElement.scrollWidth > window.innerWidth'),
    false,
    'no sideways scrolling at 390 px',
  );
  // An action the API refuses shows its message in the form.
  await page.getByRole('button', { name: 'New program' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Doomed again');
  await page.getByLabel(/^Slug/).fill((made.body.data as { slug: string }).slug);
  await page.getByRole('button', { name: 'Create program' }).click();
  t.equal(await page.getByRole('alert').textContent(), 'slug is already taken');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // Delete by keyboard: focus, Enter asks; the question's confirm button takes the focus.
  await page.getByRole('button', { name: 'Delete' }).focus();
  const focusAtQuestion = await focusWhenShown(page, '.confirm[role=group]');
  await page.keyboard.press('Enter');
  await page.getByText('Delete Doomed?').waitFor();
  t.equal(await focusAtQuestion(), 'Yes, delete', 'the question shows with the focus on its answer');
  await shot('programs-delete-confirm-390');
  await page.getByRole('button', { name: 'Cancel' }).click();
  t.equal(
    (await getJson(url(`/api/advertiser/affiliate-programs/${id}`), bearer(owner.session))).status,
    200,
  );
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('No programs in this workspace yet').waitFor();
  t.equal(
    (await getJson(url(`/api/advertiser/affiliate-programs/${id}`), bearer(owner.session))).status,
    404,
    'deleted',
  );
  assertNoErrors(t);
});

t.test('Events pages through 26 clicks, 25 at a time; a bot and a prefetch carry a badge', async (t) => {
  const owner = await signup(svc);
  const api = (path: string, body: unknown) =>
    postJson(url(`/api/advertiser/affiliate-programs${path}`), body, bearer(owner.session));
  const id = ((await api('', { name: 'Paged', workspace_id: owner.workspaceId })).body.data as { id: number })
    .id;
  const partner = await api(`/${id}/partners`, { name: 'P', email: `p-${Date.now()}@example.com` });
  const partnerId = (partner.body.data as { partner: { id: number } }).partner.id;
  const link = await api(`/${id}/partners/${partnerId}/links`, {});
  const aff = (link.body.data as { short_link: string }).short_link;
  // The two newest: a link preview's fetch (Slack's user agent) and a browser's prefetch (its header).
  const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
  for (let i = 0; i < 26; i++) {
    const r = await postJson(
      url('/api/v1/track/click'),
      {
        affiliate_url: `https://shop.example/p${i}?aff=${aff}`,
        page_url: `https://shop.example/p${i}`,
        ...(i === 25 ? { user_agent: SLACK } : {}),
      },
      i === 24 ? { 'sec-purpose': 'prefetch' } : {},
    );
    t.equal(r.status, 200);
  }
  await waitFor('26 click events', async () => {
    const r = await getJson(url(`/api/tracking/events/${id}`), bearer(owner.session));
    return (r.body.meta as { pagination: { total: number } } | undefined)?.pagination.total === 26;
  });
  const { page, assertNoErrors } = await open(t, { viewport: { width: 1280, height: 900 } });
  await page.goto(url('/login'));
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Paged' }).waitFor();
  await page.goto(url(`/programs/${id}/events`));
  await page.getByText('26 events').waitFor();
  await page.getByText('Page 1 of 2').waitFor();
  t.equal(await page.locator('table.events tbody tr').count(), 25);
  const rowOf = (n: number) =>
    page.locator('table.events tbody tr', { hasText: new RegExp(`shop\\.example/p${n}(?!\\d)`) });
  t.equal(await rowOf(25).getByTestId('quality').textContent(), 'bot', "the link preview's badge");
  t.equal(await rowOf(24).getByTestId('quality').textContent(), 'prefetch', "the prefetch's badge");
  t.equal(
    await page.locator('table.events tbody').getByTestId('quality').count(),
    2,
    'a human click has none',
  );
  t.match(await page.getByTestId('quality-note').textContent(), /listed here but counted nowhere else/);
  t.ok(await page.getByRole('button', { name: 'Previous page' }).isDisabled());
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByText('Page 2 of 2').waitFor();
  t.equal(await page.locator('table.events tbody tr').count(), 1);
  t.match(
    await page.locator('table.events tbody').textContent(),
    /shop\.example\/p0(?!\d)/,
    'the oldest last',
  );
  t.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled());
  assertNoErrors(t);
});

t.test('/docs renders the API reference without a login', async (t) => {
  const { page, shot, assertNoErrors } = await open(t, { viewport: { width: 1280, height: 900 } });
  await page.goto(url('/docs'));
  await page.getByRole('heading', { name: /reference/ }).waitFor();
  await page.setViewportSize({ width: 390, height: 844 });
  t.equal(
    await page.evaluate('document.documentElement.scrollWidth > window.innerWidth'),
    false,
    'no sideways scrolling at 390 px',
  );
  await page.setViewportSize({ width: 1280, height: 900 });
  const op = page.locator('article.op', { hasText: '/api/v1/track/sale' }).first();
  t.match(await op.textContent(), /POST/);
  const body = op.locator('table', { has: page.locator('caption', { hasText: 'Request body' }) });
  const txn = body.getByRole('row', { name: /^transaction_id/ });
  t.match(await txn.textContent(), /^transaction_idstringyes/, 'request body fields, required ones marked');
  const responses = op.locator('table', { has: page.locator('caption', { hasText: 'Responses' }) });
  t.equal(await responses.getByRole('rowheader', { name: '409', exact: true }).count(), 1, 'responses');
  t.ok(await page.getByRole('heading', { name: 'dashboard' }).isVisible(), 'grouped by tag');
  // Its top only: the whole reference is one very long page (a 4.6 MB picture), and with both cores busy
  // its full-page screenshot took longer than 90 s.
  await shot('docs', { fullPage: false });
  assertNoErrors(t);
});
