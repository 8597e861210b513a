// Paying partners in the dashboard, in a real browser against the real service (issue 18): the hold period
// and minimum payout on the program form (the API's 400 shown); the review queue on Commissions (the reason
// in words, approve, reject with a reason, "payable on"); the Payouts page: New payout previews who is paid
// what (a partner without a payout method and one under the minimum flagged) and creates only on confirm,
// the CSV and PayPal exports download, mark paid with a reference, cancel, and an API error shown in words.
// Commissions are made by the commission lifecycle (test/helpers/commissions.ts); every decision goes
// through the real API. No console errors; screenshots in test/screenshots/ (docs/images/ with
// SVC_DOC_IMAGES=1).
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { addPartner, invitedPartner } from '../helpers/partners.ts';
import { seedCommissions } from '../helpers/commissions.ts';
import { docShot, pageWiderThanViewport } from '../helpers/portal.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);

const owner = await signup(svc, { workspace: 'Acme' });
const auth = bearer(owner.session);
// USD: the seeded commissions are in USD (test/helpers/commissions.ts).
const created = await send(
  'POST',
  api('/api/advertiser/affiliate-programs'),
  { name: 'Bean Shop', currency: 'USD' },
  auth,
);
if (created.status !== 201) throw new Error(`program: ${created.text}`);
const program = created.body.data as { id: number };
const P = `/api/advertiser/affiliate-programs/${program.id}`;
await send('POST', api(`${P}/go-live`), {}, auth);

// Pat has a PayPal payout method (set in the partner portal); Ben has none; Cy earns less than the minimum.
const pat = await invitedPartner(svc, owner, program.id);
const setMethod = await send(
  'PUT',
  api('/api/partner/payout-method'),
  { type: 'paypal', email: 'pat.paypal@example.com' },
  bearer(pat.session),
);
if (setMethod.status !== 200) throw new Error(`payout method: ${setMethod.text}`);
const ben = await addPartner(svc, owner, program.id, { name: 'Ben Nomethod' });
const cy = await addPartner(svc, owner, program.id, { name: 'Cy Small' });
const of = (p: { partnerId: number; ppId: number }) => ({
  programId: program.id,
  partnerId: p.partnerId,
  partnerProgramId: p.ppId,
});

interface Commission {
  id: number;
  status: string;
  refund_reason: string | null;
  review_reason: string | null;
  payout_id: number | null;
}
interface Payout {
  id: number;
  partner_id: number;
  status: string;
  amount_cents: number;
  reference: string | null;
  commission_ids: number[];
}
const commission = async (id: number) =>
  ((await getJson(api(`${P}/commissions?limit=1000`), auth)).body.data as Commission[]).find(
    (c) => c.id === id,
  )!;
const payouts = async () => (await getJson(api(`${P}/payouts`), auth)).body.data as Payout[];

t.test('the program form: hold period and minimum payout, the API 400 shown', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    allowStatus: [{ status: 400, url: /\/api\/advertiser\/affiliate-programs\/\d+$/ }],
  });
  await goto('/programs');
  const card = page.locator('.card', { hasText: 'Bean Shop' });
  t.match(await card.innerText(), /Hold period\s+30 days/, 'the default hold is shown');
  await card.getByRole('button', { name: 'Edit' }).click();
  const form = page.getByRole('form', { name: 'Edit Bean Shop' });
  await form.getByLabel(/Hold period/).fill('400');
  await form.getByLabel(/Minimum payout/).fill('10.00');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await form.getByRole('alert').filter({ hasText: 'hold_days must be an integer from 0 to 365' }).waitFor();
  await form.getByLabel(/Hold period/).fill('0');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await form.waitFor({ state: 'detached' });
  await card.getByText('$10.00').waitFor();
  t.match(await card.innerText(), /Hold period\s+0 days/);
  const read = await getJson(api(P), auth);
  t.match(read.body.data, { hold_days: 0, min_payout_cents: 1000 }, 'sent as whole days and cents');
  assertNoErrors(t);
});

// Pat: two payable commissions and two held for review; Ben: one payable; Cy: one under the minimum.
const [patA, patB] = await seedCommissions(sql, of(pat), [
  { saleCents: 10_000, amountCents: 1500 },
  { saleCents: 20_000, amountCents: 2500 },
]);
// Held for review by the lifecycle's own rules at creation: a customer with Pat's email, a click from the
// address Pat's account signed in from.
const [heldOk, heldBad] = await seedCommissions(sql, of(pat), [
  { saleCents: 5_000, amountCents: 700, status: 'pending', heldFor: 'self_referral' },
  { saleCents: 9_000, amountCents: 900, status: 'pending', heldFor: 'partner_ip' },
]);
const [benC] = await seedCommissions(sql, of(ben), [{ saleCents: 30_000, amountCents: 3000 }]);
const [cyC] = await seedCommissions(sql, of(cy), [{ saleCents: 4_000, amountCents: 400 }]);

t.test('the review queue: the reason in words, approve one, reject one with a reason', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: owner });
  await goto(`/programs/${program.id}/commissions`);
  await page.getByRole('columnheader', { name: 'Payable on' }).waitFor();
  await page.getByLabel('Status').selectOption('review');
  const ok = page.locator(`tr[data-commission="${heldOk!.id}"]`);
  const bad = page.locator(`tr[data-commission="${heldBad!.id}"]`);
  await ok.waitFor();
  // The unfiltered list had them too: wait until a payable commission has left it.
  await page.locator(`tr[data-commission="${patA!.id}"]`).waitFor({ state: 'detached' });
  t.equal(await page.locator('tr[data-commission]').count(), 2, 'only the held commissions are listed');
  t.match(await ok.getByTestId('review-reason').innerText(), /Self-referral/);
  t.match(await bad.getByTestId('review-reason').innerText(), /Partner IP/);
  // Columns: Created, Partner, Sale, Amount, Status, Payable on, …
  t.notSame((await ok.locator('td').nth(5).innerText()).trim(), '—', 'payable on is shown');
  await docShot(page, 'dashboard-review-queue');

  await ok.getByRole('button', { name: /^Approve/ }).click();
  await ok.locator('.badge.approved').waitFor();
  await bad.getByRole('button', { name: /^Reject/ }).click();
  await bad.getByLabel(/Reason/).fill('Bought it himself');
  await bad.getByRole('button', { name: 'Yes, reject' }).click();
  await bad.locator('.badge.reversed').waitFor();
  t.equal(await bad.getByRole('button', { name: /^Approve/ }).count(), 0, 'decided: no more actions');

  t.match(await commission(heldOk!.id), { status: 'approved', review_reason: null });
  t.match(await commission(heldBad!.id), {
    status: 'reversed',
    refund_reason: 'rejected: Bought it himself',
  });
  await page.reload();
  await page.getByLabel('Status').selectOption('review');
  await page.getByText('No commissions wait for review.').waitFor();
  assertNoErrors(t);
});

t.test('payouts: preview, create on confirm, export, mark paid with a reference, cancel', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    allowStatus: [{ status: 409, url: /\/api\/advertiser\/payouts\/\d+\/mark-paid$/ }],
  });
  await goto(`/programs/${program.id}/commissions`);
  await page.getByRole('navigation', { name: 'Program' }).getByRole('link', { name: 'Payouts' }).click();
  await page.getByRole('heading', { name: 'Payouts' }).waitFor();
  await page.getByText('No payouts yet.').waitFor();

  // The preview writes nothing; it names who is paid what and flags Ben and Cy.
  await page.getByRole('button', { name: 'New payout' }).click();
  const preview = page.getByRole('region', { name: 'New payout' });
  const summary = preview.getByTestId('preview-summary');
  await summary.waitFor();
  t.match(await summary.innerText(), /2 payouts, \$77\.00 in all\. Minimum payout: \$10\.00/);
  const patRow = preview.getByRole('row', { name: /Pat Partner/ });
  t.match(await patRow.innerText(), /PayPal \(pat\.paypal@example\.com\)\s+3\s+\$47\.00\s+Paid by this run/);
  t.match(await preview.getByRole('row', { name: /Ben Nomethod/ }).innerText(), /No payout method/);
  t.match(await preview.getByRole('row', { name: /Cy Small/ }).innerText(), /Below the minimum/);
  t.match(await preview.innerText(), /One partner has no payout method/);
  await docShot(page, 'dashboard-payout-preview');
  t.same(await payouts(), [], 'nothing created by the preview');

  await preview.getByRole('button', { name: 'Create 2 payouts ($77.00)' }).click();
  await page.getByRole('status').filter({ hasText: 'Created 2 payouts, $77.00 in all' }).waitFor();
  const made = await payouts();
  const patPayout = made.find((p) => p.partner_id === pat.partnerId)!;
  const benPayout = made.find((p) => p.partner_id === ben.partnerId)!;
  t.equal(made.length, 2);
  t.same(
    patPayout.commission_ids.sort((a, b) => a - b),
    [patA!.id, patB!.id, heldOk!.id].sort((a, b) => a - b),
    "Pat's payable commissions, the approved hold among them",
  );
  t.match(benPayout, { status: 'pending', amount_cents: 3000, commission_ids: [benC!.id] });
  t.equal((await commission(cyC!.id)).payout_id, null, "Cy's commission carries over");
  const patTr = page.locator(`tr[data-payout="${patPayout.id}"]`);
  const benTr = page.locator(`tr[data-payout="${benPayout.id}"]`);
  await patTr.waitFor();
  t.match(await benTr.innerText(), /No payout method[\s\S]*\$30\.00\s+1\s+pending/);

  // The export links download the files of the pending payouts.
  const downloading = page.waitForEvent('download');
  await page.getByRole('link', { name: 'CSV' }).click();
  const csvDownload = await downloading;
  const csv = await readFile((await csvDownload.path())!, 'utf8');
  t.match(csv, /^payout_id,status,partner_id,partner_name/);
  t.match(csv, new RegExp(`\\n${benPayout.id},pending,${ben.partnerId},Ben Nomethod,.*no payout method`));
  const paypalHref = await page.getByRole('link', { name: 'PayPal Payouts' }).getAttribute('href');
  const paypal = await page.request.get(paypalHref!);
  t.equal(paypal.status(), 200);
  t.match(paypal.headers()['content-type'], /^text\/csv/);
  const paypalBody = await paypal.text();
  t.match(paypalBody, /pat\.paypal@example\.com,47\.00,USD/);
  t.notMatch(paypalBody, /Ben Nomethod/, 'a partner without a method is left out of the PayPal file');

  // Mark Pat's payout paid with a reference; cancel Ben's.
  await patTr.getByRole('button', { name: /^Mark paid/ }).click();
  await patTr.getByLabel(/Reference/).fill('PP-BATCH-42');
  await patTr.getByRole('button', { name: 'Yes, mark paid' }).click();
  await patTr.locator('.badge.paid').waitFor();
  t.match(await patTr.innerText(), /PP-BATCH-42/);
  await benTr.getByRole('button', { name: 'Cancel payout' }).click();
  await benTr.getByRole('button', { name: 'Yes, cancel it' }).click();
  await benTr.locator('.badge.canceled').waitFor();
  t.equal(await benTr.getByRole('button').count(), 0, 'a canceled payout has no actions');

  const after = await payouts();
  t.match(
    after.find((p) => p.id === patPayout.id),
    { status: 'paid', reference: 'PP-BATCH-42' },
  );
  t.match(
    after.find((p) => p.id === benPayout.id),
    { status: 'canceled' },
  );
  t.equal((await commission(patA!.id)).status, 'paid', "the payout's commissions are paid");
  t.equal((await commission(benC!.id)).payout_id, null, "the canceled payout's commission is payable again");
  await docShot(page, 'dashboard-payouts');

  // Ben is payable again; a payout canceled behind the page's back answers 409, shown in words.
  await page.getByRole('button', { name: 'New payout' }).click();
  await preview.getByRole('button', { name: 'Create payout ($30.00)' }).click();
  await page.getByRole('status').filter({ hasText: 'Created 1 payout, $30.00 in all' }).waitFor();
  const again = (await payouts()).find((p) => p.partner_id === ben.partnerId && p.status === 'pending')!;
  const againTr = page.locator(`tr[data-payout="${again.id}"]`);
  await againTr.getByRole('button', { name: /^Mark paid/ }).click();
  t.equal((await send('POST', api(`/api/advertiser/payouts/${again.id}/cancel`), {}, auth)).status, 200);
  await againTr.getByRole('button', { name: 'Yes, mark paid' }).click();
  await againTr.getByRole('alert').filter({ hasText: 'A canceled payout cannot be marked paid' }).waitFor();
  t.pass('the API error is shown');
  assertNoErrors(t);
});

t.test('390 px: the Payouts page fits; a viewer sees the payouts and no write actions', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    viewport: { width: 390, height: 844 },
  });
  await goto(`/programs/${program.id}/payouts`);
  await page.locator('tr[data-payout]').first().waitFor();
  t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling');
  assertNoErrors(t);

  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  const v = await openPage(t, browser, svc.baseUrl, { user: viewer });
  // The viewer's own workspace comes first: open Acme's, as choosing it in the switcher would.
  await v.page.addInitScript((ws) => localStorage.setItem('svc.workspace', String(ws)), owner.workspaceId);
  await v.goto(`/programs/${program.id}/payouts`);
  await v.page.locator('tr[data-payout]').first().waitFor();
  t.match(await v.page.locator('main').innerText(), /owners and admins create and pay them/);
  t.same(
    (await v.page.locator('main button').allInnerTexts()).filter((b) =>
      /New payout|Mark paid|Cancel/.test(b),
    ),
    [],
    'no write actions',
  );
  t.ok(
    await v.page.getByRole('link', { name: 'CSV' }).isVisible(),
    'the exports are readable (payouts:read)',
  );
  v.assertNoErrors(t);
});
