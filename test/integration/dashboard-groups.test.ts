// The Groups page and a partner's group in a real browser against the real service (CONTRACT part four "The
// dashboard and the portal"): create a group, edit its rate into a stepped one and its hold, give it a discount,
// a rate and a discount the API refuses shown as it says them; the tier ladder set, and a rule to its own group refused with that rule
// marked; a partner moved with the group picker and locked, and given an own commission; deleting the
// default group refused with the 409 explained, deleting another moving its partners to the default group;
// a bonus created (a past end refused as the API says), its partners' progress shown as bars, then deleted; a
// viewer sees no write button; no sideways scrolling at 390 px; no console errors. The API agrees at each
// step. Screenshot: docs/images/dashboard-groups.png (with SVC_DOC_IMAGES=1).
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage, settled } from '../helpers/browser.ts';
import { addPartner } from '../helpers/partners.ts';
import { awardBonus } from '../helpers/commissions.ts';
import { docShot, pageWiderThanViewport } from '../helpers/portal.ts';
import { groupsOf } from '../helpers/rewards.ts';
import type { Group } from '../helpers/rewards.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);

const owner = await signup(svc, { workspace: 'Acme' });
const auth = bearer(owner.session);
const created = await send(
  'POST',
  api('/api/advertiser/affiliate-programs'),
  { name: 'Bean Shop', currency: 'EUR', commission: { type: 'percentage', percent: 20 } },
  auth,
);
if (created.status !== 201) throw new Error(`program: ${created.text}`);
const program = created.body.data as { id: number };
const P = `/api/advertiser/affiliate-programs/${program.id}`;
const groupsPage = `/programs/${program.id}/groups`;
const ana = await addPartner(svc, owner, program.id, { name: 'Ana Creator' });
const ben = await addPartner(svc, owner, program.id, { name: 'Ben Blogger' });

const groups = () => groupsOf(svc, owner, program.id);
const groupNamed = async (name: string) => (await groups()).find((g) => g.name === name);
const partnerOf = async (id: number) =>
  (
    (await getJson(api(`${P}/partners`), auth)).body.data as {
      id: number;
      group: { id: number; name: string };
      group_locked: boolean;
      commission_override: Record<string, unknown> | null;
    }[]
  ).find((p) => p.id === id)!;
/** The provoked failures the browser logs as console errors. */
const refusals = [
  { status: 400, url: /\/groups(\/\d+)?$/ },
  { status: 400, url: /\/tier-rules$/ },
  { status: 409, url: /\/groups\/\d+$/ },
];

let gold: Group;

t.test('create a group, edit its rate into a stepped one; a rate the API refuses is shown', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    allowStatus: refusals,
  });
  await goto(groupsPage);
  await page.getByRole('heading', { name: 'Groups', exact: true }).waitFor();
  await settled(page);
  t.equal(
    await page
      .getByRole('navigation', { name: 'Program' })
      .getByRole('link', { name: 'Groups' })
      .getAttribute('aria-current'),
    'page',
    'Groups is in the program nav, current',
  );
  const dflt = page.locator('tr[data-group="default"]');
  t.match(await dflt.innerText(), /Default\s+default/, 'the default group, with its badge');
  t.match(await dflt.innerText(), /20% \(recurring, lifetime\)/, "its commission is the program's");
  t.equal(await dflt.getByTestId('group-partners').innerText(), '2', 'both partners are in it');

  await page.getByRole('button', { name: 'New group' }).click();
  const form = page.getByRole('form', { name: 'New group' });
  t.equal(
    await page.evaluate<string | null>(
      'document.activeElement && document.activeElement.labels?.[0]?.textContent',
    ),
    'Group name',
    'the form opens with the focus on its first field',
  );
  t.equal(
    await form.getByRole('group', { name: 'Commission' }).getByLabel('Percent', { exact: true }).inputValue(),
    '20',
    "a new group starts from the program's commission",
  );
  await form.getByLabel('Group name').fill('Gold');
  await form.getByRole('group', { name: 'Commission' }).getByLabel('Percent', { exact: true }).fill('30');
  await form.getByRole('button', { name: 'Create group' }).click();
  const row = page.locator('tr[data-group="gold"]');
  await row.waitFor();
  t.match(await row.innerText(), /30% \(recurring, lifetime\)/);
  gold = (await groupNamed('Gold'))!;
  t.match(gold, {
    slug: 'gold',
    is_default: false,
    commission: { type: 'percentage', percent: 30 },
    partners: 0,
  });

  // A rate out of range: the API's message, the form still open with what was typed.
  await row.getByRole('button', { name: 'Edit Gold' }).click();
  const edit = page.getByRole('form', { name: 'Edit Gold' });
  const rate = edit.getByRole('group', { name: 'Commission' }).getByLabel('Percent', { exact: true });
  await rate.fill('150');
  await edit.getByRole('button', { name: 'Save group' }).click();
  t.equal(
    await edit.getByRole('alert').innerText(),
    'percent must be a number from 0 to 100 (at most 4 decimals)',
    "the API's message, naming the field",
  );
  t.equal(await rate.inputValue(), '150', 'what was typed stays');
  t.match((await groupNamed('Gold'))!.commission, { percent: 30 }, 'nothing changed');

  // A stepped rate: 50% for each customer's first 3 payments, then 35%; its own hold of 7 days.
  await rate.fill('35');
  await edit.getByLabel("A different rate for each customer's first payments").check();
  await edit.getByLabel('Number of first payments').fill('3');
  await edit
    .getByRole('group', { name: 'Rate of the first payments' })
    .getByLabel('Percent', { exact: true })
    .fill('50');
  await edit.getByLabel(/Hold period/).fill('7');
  await edit.getByRole('button', { name: 'Save group' }).click();
  await edit.waitFor({ state: 'detached' });
  await page.locator('tr[data-group="gold"]', { hasText: '50% for the first 3 payments' }).waitFor();
  t.match(await row.innerText(), /50% for the first 3 payments, then 35% \(recurring, lifetime\)/);
  t.match(await row.innerText(), /7 days/);
  t.match((await groupNamed('Gold'))!, {
    hold_days: 7,
    auto_approve: null,
    commission: {
      type: 'percentage',
      percent: 35,
      recurring: { mode: 'recurring', months: null, first: { count: 3, type: 'percentage', percent: 50 } },
    },
  });

  // A discount for the customers Gold's partners bring: 0% refused as the API says, then 10% for 3 months.
  await row.getByRole('button', { name: 'Edit Gold' }).click();
  const discount = edit.getByRole('group', { name: 'Discount for the customers they bring' });
  await discount.getByLabel(/Offer a discount/).check();
  await discount.getByLabel('Percent off').fill('0');
  await edit.getByRole('button', { name: 'Save group' }).click();
  t.equal(
    await edit.getByRole('alert').innerText(),
    'discount.percent must be more than 0 and at most 100 (at most 4 decimals)',
  );
  await discount.getByLabel('Percent off').fill('10');
  await discount.getByLabel('Applies to').selectOption('repeating');
  await discount.getByLabel('Months', { exact: true }).fill('3');
  await discount.getByLabel(/Stripe/).fill('promo_gold10');
  await edit.getByRole('button', { name: 'Save group' }).click();
  await edit.waitFor({ state: 'detached' });
  await page.locator('tr[data-group="gold"]', { hasText: '10% off, for 3 months' }).waitFor();
  t.match(await row.getByTestId('group-discount').innerText(), /^10% off, for 3 months\s+Stripe$/);
  t.match((await groupNamed('Gold'))!, {
    discount: {
      type: 'percentage',
      percent: 10,
      duration: 'repeating',
      months: 3,
      processor_ids: { stripe: 'promo_gold10' },
    },
    commission: { percent: 35 },
  });
  t.equal(await dflt.getByTestId('group-discount').innerText(), '—', 'the default group offers none');
  assertNoErrors(t);
});

t.test(
  'the tier ladder: set, shown as from → to at the threshold; a bad rule refused and marked',
  async (t) => {
    const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
      user: owner,
      allowStatus: refusals,
    });
    await goto(groupsPage);
    await page.getByText('No tier rules').waitFor();
    await page.getByRole('button', { name: 'Edit the ladder' }).click();
    const form = page.getByRole('form', { name: 'Edit the tier ladder' });
    await form.getByRole('button', { name: 'Add a rule' }).click();
    const rule1 = form.getByRole('group', { name: 'Rule 1' });
    t.equal(await rule1.getByLabel('From group').inputValue(), String((await groupNamed('Default'))!.id));
    t.equal(await rule1.getByLabel('To group').inputValue(), String(gold.id), 'the next group up by default');
    await rule1.getByLabel(/Threshold \(EUR\)/).fill('1000');
    await form.getByRole('button', { name: 'Save the ladder' }).click();
    const ladder = page.getByRole('list', { name: /Tier rules/ });
    await ladder.waitFor();
    t.match(
      await ladder.innerText(),
      /^Default\s*→\s*to\s+Gold at €1,000\.00 of sales in total · existing customers earn the new rate$/,
    );
    const rules = (await getJson(api(`${P}/tier-rules`), auth)).body.data as Record<string, unknown>[];
    t.match(rules, [
      {
        from_group_id: (await groupNamed('Default'))!.id,
        to_group_id: gold.id,
        metric: 'sales_cents',
        window: 'lifetime',
        threshold: 100_000,
        carry_existing_customers: true,
      },
    ]);

    // A second rule from Gold to itself: the API's 400 names it, the rule is marked, nothing changes.
    await page.getByRole('button', { name: 'Edit the ladder' }).click();
    await form.getByRole('button', { name: 'Add a rule' }).click();
    const rule2 = form.getByRole('group', { name: 'Rule 2' });
    await rule2.getByLabel('From group').selectOption(String(gold.id));
    await rule2.getByLabel('To group').selectOption(String(gold.id));
    await rule2.getByLabel('Metric').selectOption('customers');
    await rule2.getByLabel(/Threshold \(customers\)/).fill('10');
    await form.getByRole('button', { name: 'Save the ladder' }).click();
    t.equal(
      await form.getByRole('alert').innerText(),
      'tier_rules[1].to_group_id must differ from from_group_id',
    );
    t.equal(await rule2.getAttribute('aria-invalid'), 'true', 'the rule named is marked');
    t.equal(await rule1.getAttribute('aria-invalid'), null);
    t.equal(
      await page.evaluate<string | null>(
        'document.activeElement?.closest("fieldset")?.querySelector("legend")?.textContent ?? null',
      ),
      'Rule 2',
      'the focus moves to the rule named',
    );
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached' });
    t.equal(
      ((await getJson(api(`${P}/tier-rules`), auth)).body.data as unknown[]).length,
      1,
      'nothing changed',
    );
    assertNoErrors(t);
  },
);

t.test("the partner's group picker and lock; an own commission", async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: owner });
  await goto(`/programs/${program.id}/partners`);
  const row = page.getByRole('row', { name: /Ana Creator/ });
  const cell = row.getByTestId('partner-group');
  await cell.getByRole('button', { name: 'Change group of Ana Creator' }).waitFor();
  t.equal((await cell.innerText()).split('\n')[0], 'Default');
  await cell.getByRole('button', { name: 'Change group of Ana Creator' }).click();
  const picker = page.getByRole('form', { name: 'Group of Ana Creator' });
  t.equal(
    await page.evaluate<string | null>('document.activeElement && document.activeElement.tagName'),
    'SELECT',
    'the picker opens with the focus on the group',
  );
  await picker.getByLabel('Group').selectOption({ label: 'Gold' });
  await picker.getByLabel(/Lock/).check();
  await picker.getByRole('button', { name: /^Save/ }).click();
  await picker.waitFor({ state: 'detached' });
  await cell.getByText('locked', { exact: true }).waitFor();
  t.match(await cell.innerText(), /Gold\s+locked/);
  t.match(await partnerOf(ana.partnerId), { group: { id: gold.id, name: 'Gold' }, group_locked: true });

  // An own commission: 40%, first payment only.
  await row.getByRole('button', { name: /^Links, codes and commission/ }).click();
  const own = page.getByRole('region', { name: 'Commission of Ana Creator' });
  t.match(await own.innerText(), /Earns Gold's commission: 50% for the first 3 payments, then 35%/);
  await own.getByRole('button', { name: /Set an own commission/ }).click();
  const form = own.getByRole('form', { name: 'Own commission of Ana Creator' });
  await form.getByRole('group', { name: 'Own commission' }).getByLabel('Percent', { exact: true }).fill('40');
  await form.getByLabel('Commission on').selectOption('one_time');
  await form.getByRole('button', { name: 'Save own commission' }).click();
  await form.waitFor({ state: 'detached' });
  await own.getByText('Own commission: 40%').waitFor();
  t.match(await own.innerText(), /Own commission: 40% \(first sale only\)\. It wins over Gold's\./);
  t.match((await partnerOf(ana.partnerId)).commission_override, {
    type: 'percentage',
    percent: 40,
    recurring: { mode: 'one_time' },
  });
  await own.getByRole('button', { name: 'Remove own commission' }).click();
  await own.getByRole('button', { name: 'Yes, remove' }).click();
  await own.getByText("Earns Gold's commission").waitFor();
  t.equal((await partnerOf(ana.partnerId)).commission_override, null);

  await goto(groupsPage);
  const goldRow = page.locator('tr[data-group="gold"]');
  await goldRow.waitFor();
  t.equal(await goldRow.getByTestId('group-partners').innerText(), '1', 'Gold counts Ana');
  t.equal(await page.locator('tr[data-group="default"]').getByTestId('group-partners').innerText(), '1');
  await settled(page);
  await page.getByRole('list', { name: /Tier rules/ }).waitFor();
  await docShot(page, 'dashboard-groups');
  assertNoErrors(t);
});

t.test('bonuses: a bad one refused as the API says; one created, its progress, then deleted', async (t) => {
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
    user: owner,
    viewport: { width: 1280, height: 900 },
    allowStatus: [{ status: 400, url: /\/bonuses$/ }],
  });
  await goto(groupsPage);
  await page.getByText('No bonuses.').waitFor();
  await page.getByRole('button', { name: 'New bonus' }).click();
  const form = page.getByRole('form', { name: 'New bonus' });
  await form.getByLabel('Bonus name').fill('Spring push');
  await form.getByLabel(/^Goal/).fill('300');
  await form.getByLabel(/^Bonus amount/).fill('50');
  await form.getByLabel('Ends').fill('2020-01-01T12:00');
  await form.getByRole('button', { name: 'Create bonus' }).click();
  t.equal(await form.getByRole('alert').innerText(), 'ends_at must be in the future', "the API's message");
  await form.getByLabel('Ends').fill('2099-01-01T12:00');
  await form.getByLabel('Every group').uncheck();
  await form.getByLabel('Default').check();
  await form.getByLabel('Gold').check();
  await form.getByRole('button', { name: 'Create bonus' }).click();
  const card = page.getByRole('article', { name: /Spring push/ });
  await card.waitFor();
  t.match(await card.innerText(), /€300\.00 of sales, once/);
  t.match(await card.innerText(), /Pays\s+€50\.00/);
  t.match(await card.innerText(), /Groups\s+Default, Gold/);
  const [bonus] = (await getJson(api(`${P}/bonuses`), auth)).body.data as { id: number }[];
  t.match(bonus, {
    name: 'Spring push',
    group_ids: [(await groupNamed('Default'))!.id, gold.id],
    metric: 'sales_cents',
    threshold: 30_000,
    amount_cents: 5000,
  });
  await card.getByText('No partner has progress yet.').waitFor();

  // Progress as the sale path leaves it: Ana (in Gold) at €120.00, Ben (in Default) past the goal and paid.
  await sql`insert into bonus_progress (bonus_id, partner_program_id, period, value, awarded_at)
            values (${bonus!.id}, ${ana.ppId}, 'once', 12000, null), (${bonus!.id}, ${ben.ppId}, 'once', 31000, now())`;
  // Ben's bonus commission (what the sale path made with his award, lifecycle `awardBonuses`): the card counts it.
  await awardBonus(
    sql,
    { programId: program.id, partnerId: ben.partnerId, partnerProgramId: ben.ppId },
    { bonusId: bonus!.id, amountCents: 5000, currency: 'EUR' },
  );
  await page.reload();
  const bars = card.getByRole('progressbar');
  await bars.nth(1).waitFor();
  t.equal(
    await bars.nth(0).getAttribute('aria-label'),
    'Ben Blogger towards Spring push',
    'the closest first',
  );
  t.equal(await bars.nth(0).getAttribute('aria-valuetext'), '€310.00 of €300.00 (100%)');
  t.equal(await bars.nth(1).getAttribute('aria-valuetext'), '€120.00 of €300.00 (40%)');
  t.match(await card.innerText(), /Ben Blogger \(Default\)\s+earned/);
  t.equal(await card.getByTestId('bonus-awarded').innerText(), '1', 'the commissions it made');
  await settled(page);
  await docShot(page, 'dashboard-groups');

  await card.getByRole('button', { name: 'Delete Spring push' }).click();
  await card.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('No bonuses.').waitFor();
  t.same((await getJson(api(`${P}/bonuses`), auth)).body.data, [], 'the API agrees');
  assertNoErrors(t);
});

t.test('a viewer sees the groups and the ladder, and no button that changes them', async (t) => {
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  // Only the owner's workspace: the dashboard opens the first of a user's workspaces (its own, else).
  await sql`delete from memberships where user_id = ${viewer.userId} and workspace_id <> ${owner.workspaceId}`;
  const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, { user: viewer });
  await goto(groupsPage);
  await page.locator('tr[data-group="gold"]').waitFor();
  await page.getByRole('list', { name: /Tier rules/ }).waitFor();
  for (const name of ['New group', 'Edit Gold', 'Delete Gold', 'Edit the ladder']) {
    t.equal(await page.getByRole('button', { name }).count(), 0, `no ${name}`);
  }
  await goto(`/programs/${program.id}/partners`);
  await page
    .getByRole('row', { name: /Ana Creator/ })
    .getByTestId('partner-group')
    .waitFor();
  t.equal(await page.getByRole('button', { name: /^Change group/ }).count(), 0, 'no group picker');
  assertNoErrors(t);
});

t.test(
  'delete: the default group refused with the reason; another moves its partners to the default',
  async (t) => {
    const { page, goto, assertNoErrors } = await openPage(t, browser, svc.baseUrl, {
      user: owner,
      viewport: { width: 390, height: 844 },
      allowStatus: refusals,
    });
    await goto(groupsPage);
    const dflt = page.locator('tr[data-group="default"]');
    await dflt.waitFor();
    await settled(page);
    t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');
    await dflt.getByRole('button', { name: 'Delete Default' }).click();
    await dflt.getByRole('button', { name: 'Yes, delete' }).click();
    t.match(
      await dflt.getByRole('alert').innerText(),
      /^The default group cannot be deleted: it holds the program's own commission/,
    );
    t.ok(await groupNamed('Default'), 'still there');

    const goldRow = page.locator('tr[data-group="gold"]');
    await goldRow.getByRole('button', { name: 'Delete Gold' }).click();
    t.match(
      await goldRow.getByRole('group').getAttribute('aria-label'),
      /^Delete Gold\? Its partner moves to Default; commissions made so far stay as they are; tier rules from or to it are removed\.$/,
      'the question says where its partners go',
    );
    await goldRow.getByRole('button', { name: 'Yes, delete' }).click();
    await goldRow.waitFor({ state: 'detached' });
    await page.getByText('No tier rules').waitFor();
    t.equal(await dflt.getByTestId('group-partners').innerText(), '2', 'Ana is back in Default');
    t.match(await partnerOf(ana.partnerId), { group: { name: 'Default' } });
    t.same((await getJson(api(`${P}/tier-rules`), auth)).body.data, [], 'its tier rule went with it');
    assertNoErrors(t);
  },
);
