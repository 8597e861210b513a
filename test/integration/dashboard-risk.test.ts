// The Risk page in a real browser against the real service (issue 31): the held commissions grouped by reason
// and partner, approved and rejected there through the real API; the bot and prefetch clicks by quality with
// their daily chart; the program's risk rules switched on and off. Commissions are made by the commission
// lifecycle (test/helpers/commissions.ts), filtered clicks as the click worker stores them. No
// console errors; a screenshot in test/screenshots/ (docs/images/ with SVC_DOC_IMAGES=1).
import t from 'tap';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { addPartner } from '../helpers/partners.ts';
import { seedCommissions } from '../helpers/commissions.ts';
import { docShot, pageWiderThanViewport } from '../helpers/portal.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);

const owner = await signup(svc, { workspace: 'Acme' });
const auth = bearer(owner.session);
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

const pat = await addPartner(svc, owner, program.id, { name: 'Pat Partner' });
const ben = await addPartner(svc, owner, program.id, { name: 'Ben Buyer' });
const of = (p: { partnerId: number; ppId: number }) => ({
  programId: program.id,
  partnerId: p.partnerId,
  partnerProgramId: p.ppId,
});
// Five bot clicks today, two prefetches yesterday, and a person's click (counted, not shown here).
const link = (await send('POST', api(`${P}/partners/${pat.partnerId}/links`), {}, auth)).body.data as {
  id: number;
};
let n = 0;
const click = async (quality: string, daysAgo: number) => {
  const clickId = `cust_${pat.ppId}_${9_000_000 + n + 1}`;
  await sql`insert into click_events (event_id, click_timestamp, program_id, link_id, partner_id, partner_program_id,
                                      click_id, is_test, quality)
            values (${String(9_000_000 + n++)}, now() - make_interval(days => ${daysAgo}), ${program.id}, ${link.id},
                    ${pat.partnerId}, ${pat.ppId}, ${clickId}, false, ${quality})`;
  return clickId;
};
const bots: string[] = [];
for (let i = 0; i < 5; i++) bots.push(await click('bot', 0));
for (let i = 0; i < 2; i++) await click('prefetch', 1);
await click('human', 0);

// Pat: two held for bot traffic (customers of two of the bot clicks above), one for a shared payout method;
// Ben: one for a disposable email, one payable. Each held by the lifecycle's own review rules at creation.
const patHeld = await seedCommissions(sql, of(pat), [
  { saleCents: 10_000, amountCents: 1500, status: 'pending', heldFor: 'bot_traffic', clickId: bots[0] },
  { saleCents: 20_000, amountCents: 2500, status: 'pending', heldFor: 'bot_traffic', clickId: bots[1] },
  { saleCents: 8_000, amountCents: 800, status: 'pending', heldFor: 'shared_payout_method' },
]);
const [benHeld, benOk] = await seedCommissions(sql, of(ben), [
  { saleCents: 5_000, amountCents: 700, status: 'pending', heldFor: 'disposable_email' },
  { saleCents: 9_000, amountCents: 900 },
]);

interface Commission {
  id: number;
  status: string;
  review_reason: string | null;
}
const commission = async (id: number) =>
  ((await getJson(api(`${P}/commissions?limit=1000`), auth)).body.data as Commission[]).find(
    (c) => c.id === id,
  )!;

t.test('the risk answer', async (t) => {
  const r = await getJson(api(`${P}/risk`), auth);
  t.equal(r.status, 200, r.text);
  const d = r.body.data as {
    held: {
      reason: string;
      partner_id: number;
      partner_name: string;
      commissions: number;
      amount_cents: number;
    }[];
    filtered_clicks: { quality: string; clicks: number }[];
    filtered_by_day: { date: string; quality: string; clicks: number }[];
  };
  t.same(d.held, [
    {
      reason: 'bot_traffic',
      partner_id: pat.partnerId,
      partner_name: 'Pat Partner',
      commissions: 2,
      amount_cents: 4000,
    },
    {
      reason: 'disposable_email',
      partner_id: ben.partnerId,
      partner_name: 'Ben Buyer',
      commissions: 1,
      amount_cents: 700,
    },
    {
      reason: 'shared_payout_method',
      partner_id: pat.partnerId,
      partner_name: 'Pat Partner',
      commissions: 1,
      amount_cents: 800,
    },
  ]);
  t.same(d.filtered_clicks, [
    { quality: 'bot', clicks: 5 },
    { quality: 'prefetch', clicks: 2 },
  ]);
  t.same(
    d.filtered_by_day.map((x) => [x.quality, x.clicks]),
    [
      ['prefetch', 2],
      ['bot', 5],
    ],
    'by day, oldest first',
  );
  const stranger = await signup(svc);
  const foreign = await getJson(api(`${P}/risk`), bearer(stranger.session));
  t.same([foreign.status, foreign.body], [404, { error: 'Program not found' }]);
});

t.test('the Risk page: held by reason and partner, approve, reject, filtered clicks, rules', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    viewport: { width: 1280, height: 900 },
  });
  await goto(`/programs/${program.id}/risk`);
  await page.getByRole('heading', { name: 'Held for review' }).waitFor();
  const bots = page.getByTestId('held-bot_traffic');
  await bots.waitFor();
  t.match(await bots.getByRole('heading').innerText(), /Bot traffic/);
  t.match(
    await bots.getByTestId(`held-bot_traffic-${pat.partnerId}`).innerText(),
    /Pat Partner: 2 commissions, \$40\.00/,
  );
  t.equal(await bots.locator('tr[data-commission]').count(), 2);
  t.match(await page.getByTestId('held-disposable_email').innerText(), /Ben Buyer: 1 commission, \$7\.00/);
  t.match(await page.getByTestId('held-shared_payout_method').innerText(), /Shared payout method/);
  t.equal(await page.locator(`tr[data-commission="${benOk!.id}"]`).count(), 0, 'a payable one is not listed');
  t.equal(await page.getByTestId('filtered-bot').locator('dd').innerText(), '5');
  t.equal(await page.getByTestId('filtered-prefetch').locator('dd').innerText(), '2');
  await page.locator('.uplot').waitFor();
  t.equal(await page.getByRole('switch', { name: 'Paid search' }).isChecked(), false, 'paid search off');
  t.equal(await page.getByRole('switch', { name: 'Disposable email' }).isChecked(), true);
  await docShot(page, 'dashboard-risk');

  const first = page.locator(`tr[data-commission="${patHeld[0]!.id}"]`);
  await first.getByRole('button', { name: /^Approve/ }).click();
  await first.locator('.badge.approved').waitFor();
  t.match(await commission(patHeld[0]!.id), { review_reason: null }, 'approved through the API');
  const ben1 = page.locator(`tr[data-commission="${benHeld!.id}"]`);
  await ben1.getByRole('button', { name: /^Reject/ }).click();
  await ben1.getByLabel(/Reason/).fill('Throwaway mailbox');
  await ben1.getByRole('button', { name: 'Yes, reject' }).click();
  await ben1.locator('.badge.reversed').waitFor();
  t.match(await commission(benHeld!.id), { status: 'reversed' }, 'rejected through the API');

  await page.getByRole('switch', { name: 'Paid search' }).click();
  await waitFor(
    'paid_search switched on through the API',
    async () =>
      ((await getJson(api(P), auth)).body.data as { risk_rules: { paid_search: boolean } }).risk_rules
        .paid_search,
  );
  t.equal(await page.getByRole('switch', { name: 'Paid search' }).isChecked(), true, 'the switch says so');

  await page.setViewportSize({ width: 390, height: 800 });
  t.notOk(await pageWiderThanViewport(page), 'nothing scrolls sideways at 390 px');
  assertNoErrors(t);
});
