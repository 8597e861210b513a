// The partner's group, rate, tier progress and bonuses in the portal (CONTRACT part four "The dashboard and the
// portal"), in a real browser against the real service: the program page says the group and the rate the
// partner earns, a progress bar towards the next tier in the program's currency with what is left, and the
// running bonuses with their progress; moved by the advertiser into a group with a stepped rate and locked, the
// page says the new rate and shows no tier bar; unlocked under a monthly customers rule, the bar counts
// customers this month. The programs page says the group and the partner's own rate. A group's application page,
// linked from the Groups page, shows that group's terms and its applicant joins it. No sideways scrolling at
// 390 px, no console errors. The partner's figures are written as the sale path leaves them (partner_metrics,
// bonus_progress): how sales make them is rewards-tiers.test.ts's and rewards-bonuses.test.ts's.
// Screenshot: docs/images/portal-tier-bar.png (with SVC_DOC_IMAGES=1).
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { docShot, openPortal, pageWiderThanViewport } from '../helpers/portal.ts';
import { PARTNER_PASSWORD, invitedPartner } from '../helpers/partners.ts';
import { createGroup, groupsOf } from '../helpers/rewards.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);
const DAY = 86_400_000;

const owner = await signup(svc, { workspace: 'Acme' });
const auth = bearer(owner.session);
const created = await send(
  'POST',
  api('/api/advertiser/affiliate-programs'),
  {
    name: 'Acme shop',
    currency: 'EUR',
    commission: { type: 'percentage', percent: 20 },
    public_page: true,
  },
  auth,
);
if (created.status !== 201) throw new Error(`program: ${created.text}`);
const program = created.body.data as { id: number; slug: string };
const P = `/api/advertiser/affiliate-programs/${program.id}`;
await send('POST', api(`${P}/go-live`), undefined, auth);
const dflt = (await groupsOf(svc, owner, program.id)).find((g) => g.is_default)!;
const gold = await createGroup(svc, owner, program.id, {
  name: 'Gold',
  commission: {
    type: 'percentage',
    percent: 30,
    recurring: { mode: 'recurring', first: { count: 3, type: 'percentage', percent: 50 } },
  },
});
const platinum = await createGroup(svc, owner, program.id, {
  name: 'Platinum',
  commission: { type: 'percentage', percent: 40 },
});
const ladder = async (rules: Record<string, unknown>[]) => {
  const r = await send('PUT', api(`${P}/tier-rules`), rules, auth);
  if (r.status !== 200) throw new Error(`ladder: ${r.text}`);
};
await ladder([
  {
    from_group_id: dflt.id,
    to_group_id: gold.id,
    metric: 'sales_cents',
    window: 'lifetime',
    threshold: 100_000,
  },
  {
    from_group_id: gold.id,
    to_group_id: platinum.id,
    metric: 'customers',
    window: 'calendar_month',
    threshold: 5,
  },
]);
const pat = await invitedPartner(svc, owner, program.id);
const signIn = { email: pat.email, password: PARTNER_PASSWORD };

// Pat's figures as sales left them: €420.00 of sales in total, 2 customers this month; a bonus at €120.00 of €300.00.
await sql`insert into partner_metrics (partner_program_id, period, sales_cents, customers, commission_cents)
          values (${pat.ppId}, '1970-01-01', 42000, 2, 8400),
                 (${pat.ppId}, date_trunc('month', now() at time zone 'UTC')::date, 42000, 2, 8400)`;
const bonus = await send(
  'POST',
  api(`${P}/bonuses`),
  {
    name: 'Spring push',
    metric: 'sales_cents',
    threshold: 30_000,
    amount_cents: 5000,
    period: 'once',
    ends_at: new Date(Date.now() + 30 * DAY).toISOString(),
  },
  auth,
);
if (bonus.status !== 201) throw new Error(`bonus: ${bonus.text}`);
await sql`insert into bonus_progress (bonus_id, partner_program_id, period, value)
          values (${(bonus.body.data as { id: number }).id}, ${pat.ppId}, 'once', 12000)`;
const programPage = `/partner/programs/${program.id}`;

t.test('the program page: group, rate, the bar towards the next tier, a bonus in progress', async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    as: signIn,
    viewport: { width: 1280, height: 720 },
  });
  await goto(programPage);
  const rewards = page.getByRole('region', { name: 'Your group and rate' });
  await rewards.waitFor();
  t.equal(await rewards.getByTestId('group').innerText(), 'Default');
  t.equal(
    await rewards.getByTestId('rate').innerText(),
    '20% of each sale, on every payment, for as long as the customer pays',
  );
  const tier = rewards.getByTestId('tier');
  t.match(await tier.getByRole('heading').innerText(), /^Next: Gold at €1,000\.00 of sales$/);
  const bar = tier.getByRole('progressbar', { name: 'Progress towards Gold' });
  t.equal(
    await bar.getAttribute('aria-valuetext'),
    '€420.00 of €1,000.00 (42%)',
    'money in the program currency',
  );
  t.equal(await bar.getAttribute('aria-valuenow'), '42000');
  t.equal(await bar.getAttribute('aria-valuemax'), '100000');
  t.match(await tier.innerText(), /€580\.00 to go; sales after the move earn Gold's rate\./);
  const spring = rewards.getByTestId('bonus');
  t.match(await spring.innerText(), /^Spring push: a €50\.00 bonus at €300\.00 of sales \(until /);
  t.equal(
    await spring
      .getByRole('progressbar', { name: 'Progress towards Spring push' })
      .getAttribute('aria-valuetext'),
    '€120.00 of €300.00 (40%)',
  );
  await docShot(page, 'portal-tier-bar', { fullPage: false });
  assertNoErrors(t);
});

t.test(
  'moved into Gold and locked: the stepped rate, no tier bar; unlocked: customers this month',
  async (t) => {
    const move = await send(
      'PUT',
      api(`${P}/partners/${pat.partnerId}/group`),
      { group_id: gold.id, locked: true },
      auth,
    );
    t.equal(move.status, 200, move.text);
    const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
      as: signIn,
      viewport: { width: 390, height: 844 },
    });
    await goto(programPage);
    const rewards = page.getByRole('region', { name: 'Your group and rate' });
    await rewards.getByTestId('group').filter({ hasText: 'Gold' }).waitFor();
    t.equal(
      await rewards.getByTestId('rate').innerText(),
      "50% of each sale on a customer's first 3 payments, then 30% of each sale, on every payment, for as long as the customer pays",
    );
    t.equal(await rewards.getByTestId('tier').count(), 0, 'locked: no tier to show');
    t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');

    await send(
      'PUT',
      api(`${P}/partners/${pat.partnerId}/group`),
      { group_id: gold.id, locked: false },
      auth,
    );
    await page.reload();
    const tier = rewards.getByTestId('tier');
    await tier.waitFor();
    t.match(
      await tier.getByRole('heading').innerText(),
      /^Next: Platinum at 5 customers in a calendar month \(UTC\)$/,
    );
    t.equal(
      await tier.getByRole('progressbar').getAttribute('aria-valuetext'),
      '2 of 5 this month (UTC) (40%)',
      'customers counted, not money',
    );
    t.match(await tier.innerText(), /3 customers to go/);
    t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');

    await goto('/partner/');
    const card = page.locator('.card', { hasText: 'Acme shop' });
    await card.waitFor();
    t.match(
      await card.innerText(),
      /Your commission\s+50% of each sale on a customer's first 3 payments, then 30%/,
    );
    t.match(await card.innerText(), /Your group\s+Gold/);
    assertNoErrors(t);
  },
);

t.test(
  "a group's application page: the Groups page links it, it shows the group's terms, the applicant joins it",
  async (t) => {
    const dash = await openPage(t, browser, svc.baseUrl, { user: owner });
    await dash.goto(`/programs/${program.id}/groups`);
    const link = dash.page.getByRole('link', { name: 'Application page for Gold' });
    const href = (await link.getAttribute('href'))!;
    t.equal(href, `${svc.baseUrl}/p/${program.slug}?group=gold`);
    t.equal(
      await dash.page.getByRole('link', { name: 'Application page for Default' }).getAttribute('href'),
      `${svc.baseUrl}/p/${program.slug}`,
      "the default group's is the page itself",
    );
    dash.assertNoErrors(t);

    const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
      viewport: { width: 390, height: 844 },
    });
    await goto(new URL(href).pathname + new URL(href).search);
    const terms = page.getByRole('region', { name: 'What you earn' });
    await terms
      .getByText(/of each sale/)
      .first()
      .waitFor();
    t.match(
      await terms.innerText(),
      /50% of each sale on a customer's first 3 payments, then 30% of each sale/,
    );
    await page.getByLabel('Your name').fill('Gia Gold');
    await page.getByLabel('Email').fill('gia@creators.example');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('heading', { name: 'Application received' }).waitFor();
    const partners = (await getJson(api(`${P}/partners`), auth)).body.data as {
      email: string;
      group: { name: string };
    }[];
    t.match(
      partners.find((p) => p.email === 'gia@creators.example'),
      { group: { name: 'Gold' } },
      'in Gold',
    );
    t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');
    assertNoErrors(t);
  },
);
