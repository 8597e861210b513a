// The Import page in a real browser against the real service and import worker (docs/dashboard.md "Import"):
// Rewardful chosen, its secret typed, the campaigns read from a double of Rewardful and one left out, a dry
// run that counts and writes nothing, the import with its live progress (the double holds a page: the page
// shows the step it waits for, by construction), the error rows downloaded as CSV, a CSV file imported; a
// viewer sees the imports but no form. No console errors; a screenshot in test/screenshots/.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { startServices, testSql } from '../helpers/stack.ts';
import { memberOf, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { apiProgram } from '../helpers/partners.ts';
import { docShot, pageWiderThanViewport } from '../helpers/portal.ts';
import { TEST_IMPORT_KEY } from '../helpers/imports.ts';
import { rewardfulFixture, startRewardful } from '../../scripts/lib/seed/source-doubles.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'outbox-relay', 'import-worker'], {
  IMPORT_SECRET_KEY: TEST_IMPORT_KEY,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  OUTBOX_POLL_MS: '50',
});
const browser = await launchBrowser(t);
const owner = await signup(svc, { workspace: 'Acme' });
const program = await apiProgram(svc, owner, { name: 'Bean Shop' });
const tag = randomBytes(3).toString('hex');
const SECRET = `rw_${tag}`;
const data = rewardfulFixture({ affiliates: 6, commissions: 12, tag });
data.affiliates[5]!.state = 'inactive';
const double = await startRewardful(data, SECRET);
t.teardown(() => double.close());

const partnersOf = async () =>
  (
    await sql<
      { n: number }[]
    >`select count(*)::int as n from partner_programs where program_id = ${program.id}`
  )[0]!.n;

t.test('Rewardful: campaigns, a dry run, the import with its progress, the errors as CSV', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    viewport: { width: 1280, height: 900 },
  });
  await goto(`/programs/${program.id}/import`);
  await page.getByRole('heading', { name: 'New import' }).waitFor();
  await page.getByText('No imports yet.').waitFor();
  await page.getByRole('radio', { name: 'Rewardful' }).check();
  await page.getByLabel('API Secret').fill(SECRET);
  await page.getByText('Advanced').click();
  await page.getByLabel(/API base URL/).fill(double.url);
  await page.getByRole('button', { name: 'Load campaigns' }).click();
  const friends = page.getByRole('checkbox', { name: `Friends ${tag}` });
  await friends.waitFor();
  t.equal(await friends.isChecked(), true, 'every campaign picked at first');
  await page.getByRole('checkbox', { name: `Agencies ${tag}` }).uncheck();
  t.match(await page.locator('.campaigns legend').innerText(), /1 of 2/);

  await page.getByRole('button', { name: 'Dry run' }).click();
  const dry = page.locator('article[data-import]').first();
  await dry.getByTestId('import-status').filter({ hasText: 'completed' }).waitFor();
  t.match(await dry.getByRole('heading').innerText(), /Dry run #\d+ from Rewardful/);
  t.equal(
    await dry.locator('tr[data-kind="partners"] td').first().innerText(),
    '3',
    'three partners would come',
  );
  t.equal(await partnersOf(), 0, 'a dry run writes nothing');

  const held = double.hold((path) => path === '/v1/commissions');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const run = page.locator('article[data-import]').first();
  await run.getByTestId('import-step').filter({ hasText: 'Reading commissions' }).waitFor();
  t.ok(await run.getByRole('button', { name: 'Cancel' }).isVisible(), 'a running import can be canceled');
  await docShot(page, 'dashboard-import');
  held.release();
  await run.getByTestId('import-status').filter({ hasText: 'completed' }).waitFor();
  t.equal(await partnersOf(), 3, 'the partners of the picked campaign only');
  t.equal(await run.locator('tr[data-kind="partners"] td').first().innerText(), '3');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    run.getByRole('button', { name: 'Errors (CSV)' }).click(),
  ]);
  const csv = await readFile((await download.path())!, 'utf8');
  t.match(csv, /^kind,external_id,code,message\r\n/);
  t.match(csv, /partner,[^,]+,campaign_not_selected,/);
  t.match(csv, /group,[^,]+,discount_needs_terms,/);

  await page.setViewportSize({ width: 390, height: 800 });
  t.notOk(await pageWiderThanViewport(page), 'nothing scrolls sideways at 390 px');
  assertNoErrors(t);
});

t.test('a CSV file', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: owner });
  await goto(`/programs/${program.id}/import`);
  await page.getByRole('radio', { name: 'CSV file' }).check();
  await page.locator('input[type=file]').setInputFiles({
    name: 'partners.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(`email,name,link\r\ncsv-${tag}@example.com,Cee,csv${tag}\r\n`),
  });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const card = page.locator('article[data-import]').first();
  await card.getByRole('heading', { name: /from CSV file/ }).waitFor();
  await card.getByTestId('import-status').filter({ hasText: 'completed' }).waitFor();
  t.equal(await partnersOf(), 4);
  assertNoErrors(t);
});

t.test('a viewer sees the imports, not the form', async (t) => {
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: viewer });
  // The viewer's own workspace is the first: the dashboard switches to Acme, where the program is.
  await goto('/programs');
  await page.locator('label.switcher select').selectOption({ label: 'Acme' });
  await goto(`/programs/${program.id}/import`);
  await page.getByText('Only owners and admins start imports.').waitFor();
  t.equal(await page.getByRole('heading', { name: 'New import' }).count(), 0);
  t.ok((await page.locator('article[data-import]').count()) >= 3);
  assertNoErrors(t);
});
