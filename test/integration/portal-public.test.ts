// A program's public page (/p/<slug>) in a real browser against the real service: the terms and the
// description; applying (pending), applying again (already applied), applying with a password to a program
// that approves automatically (approved; that password signs in to the portal, which shows the program and
// its link); an unknown slug; the rate limit's answer; at 1280 and 390 px, no console errors.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { docShot, openPortal, pageWiderThanViewport, pathOf, queuedMailUrl } from '../helpers/portal.ts';

// A small application limit, so the rate-limit answer can be seen; loopback is not exempt here.
const APPLY_LIMIT = 6;
const svc = await startServices(t, ['web'], {
  APPLY_RATE_LIMIT_PER_MINUTE: String(APPLY_LIMIT),
  RATE_LIMIT_EXEMPT: '',
});
const sql = testSql(t);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);
const phone = { width: 390, height: 844 };
const uniq = () => randomBytes(3).toString('hex');

const owner = await signup(svc, { workspace: 'Acme' });
async function publicProgram(name: string, extra: Record<string, unknown>) {
  const r = await postJson(
    api('/api/advertiser/affiliate-programs'),
    {
      name,
      slug: `${name.toLowerCase().replace(/\W+/g, '-')}-${uniq()}`,
      currency: 'EUR',
      commission: { type: 'percentage', percent: 30, recurring: { mode: 'recurring', months: 12 } },
      public_page: true,
      description: `${name} sells coffee.\nRecommend us to your readers.`,
      ...extra,
    },
    bearer(owner.session),
  );
  if (r.status !== 201) throw new Error(`program: ${JSON.stringify(r.body)}`);
  const p = r.body.data as { id: number; slug: string };
  await postJson(api(`/api/advertiser/affiliate-programs/${p.id}/go-live`), {}, bearer(owner.session));
  return p;
}
const reviewed = await publicProgram('Bean Shop', { cookie_window_days: 45 });
const automatic = await publicProgram('Auto Beans', { auto_approve: true });

t.test('the terms, an application, and applying again', async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl);
  await goto(`/p/${reviewed.slug}`);
  await page.getByRole('heading', { name: 'Bean Shop', level: 1 }).waitFor();
  const body = await page.locator('main').innerText();
  t.match(
    body,
    /Bean Shop sells coffee\.\nRecommend us to your readers\./,
    'the description, its lines kept',
  );
  t.match(body, /30% of each sale, on every payment for 12 months/);
  t.match(body, /45 days from a visitor's click/);
  t.match(body, /become payable \d+ days? after the sale|payable as soon as/);
  t.match(body, /Minimum payout/);
  t.equal(await page.title(), 'Bean Shop · become a partner');

  const email = `ana-${uniq()}@blog.example`;
  await page.getByLabel('Your name').fill('Ana Blogger');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/Website/).fill('https://ana.blog.example/');
  await page.getByLabel(/Message/).fill('I write about coffee for 20,000 readers.');
  await docShot(page, 'portal-public-page');
  await page.getByRole('button', { name: 'Apply' }).click();
  const answer = page.getByRole('status').filter({ hasText: 'Application received' });
  await answer.waitFor();
  t.match(await answer.innerText(), /sign-in link we emailed you/);
  const listed = await getJson(
    api(`/api/advertiser/affiliate-programs/${reviewed.id}/partners`),
    bearer(owner.session),
  );
  t.match(listed.body.data, [{ email, status: 'pending' }], 'the advertiser sees a pending partner');

  await page.reload();
  await page.getByLabel('Your name').fill('Ana Again');
  await page.getByLabel('Email').fill(email.toUpperCase());
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('status').filter({ hasText: 'You have already applied' }).waitFor();
  t.match(await page.getByRole('status').innerText(), /waiting for review/);
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from partners where lower(email) = ${email}`;
  t.equal(row!.n, 1, 'one partner record per email');
  assertNoErrors(t);
});

t.test(
  'auto-approval with a password at 390 px: approved; the banner until the mailed link; then the link',
  async (t) => {
    const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, { viewport: phone });
    await goto(`/p/${automatic.slug}`);
    await page.getByRole('heading', { name: 'Auto Beans', level: 1 }).waitFor();
    const email = `ben-${uniq()}@video.example`;
    await page.getByLabel('Your name').fill('Ben Video');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/Password/).fill('ben video password');
    t.notOk(await pageWiderThanViewport(page), 'no sideways scrolling at 390 px');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('status').filter({ hasText: 'You are approved' }).waitFor();
    await docShot(page, 'portal-public-approved', { fullPage: false });

    await page.getByRole('link', { name: 'Go to the partner portal' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('ben video password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A password typed into a public form proves nothing: only a banner until the mailed link is followed.
    await page.getByRole('heading', { name: 'Verify your email address' }).waitFor();
    t.match(await page.getByRole('alert').innerText(), new RegExp(email));
    t.equal(await page.getByRole('navigation', { name: 'Portal' }).count(), 0, 'no programs, no menu');
    t.notOk(await pageWiderThanViewport(page), 'the banner fits at 390 px');
    await docShot(page, 'portal-verify-email', { fullPage: false });
    await goto(pathOf(await queuedMailUrl(sql, svc.prefix, email, 'magic_link')));
    await page.getByRole('heading', { name: 'Your programs' }).waitFor();
    await page.getByRole('link', { name: 'Auto Beans', exact: true }).click();
    await page.getByTestId('referral-url').first().waitFor();
    t.notOk(await pageWiderThanViewport(page), 'the program page fits too');
    assertNoErrors(t);
  },
);

t.test('an unknown program, and a program without a public page', async (t) => {
  const hidden = await postJson(
    api('/api/advertiser/affiliate-programs'),
    { name: 'Hidden', slug: `hidden-${uniq()}` },
    bearer(owner.session),
  );
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    allowStatus: [{ status: 404, url: /\/api\/public\/programs\/[^/]+$/ }],
  });
  for (const slug of [`nope-${uniq()}`, (hidden.body.data as { slug: string }).slug]) {
    await goto(`/p/${slug}`);
    await page.getByRole('heading', { name: 'Program not found' }).waitFor();
    t.equal(await page.getByRole('button', { name: 'Apply' }).count(), 0, `${slug}: no form`);
  }
  assertNoErrors(t);
});

t.test('too many applications from one address: the answer says when to try again', async (t) => {
  const { page, goto, assertNoErrors } = await openPortal(t, browser, svc.baseUrl, {
    allowStatus: [{ status: 429, url: /\/api\/public\/programs\/[^/]+\/apply$/ }],
  });
  await goto(`/p/${reviewed.slug}`);
  // The bucket refills (APPLY_LIMIT a minute): on a slow machine a few more tries than the limit.
  for (let i = 0; i <= 4 * APPLY_LIMIT; i++) {
    await page.getByLabel('Your name').fill(`Many ${i}`);
    await page.getByLabel('Email').fill(`many-${i}-${uniq()}@x.example`);
    await page.getByRole('button', { name: 'Apply' }).click();
    const done = page.getByRole('status').filter({ hasText: 'Application received' });
    const limited = page.getByRole('alert').filter({ hasText: /Try again in \d+ (second|minute)/ });
    await done.or(limited).first().waitFor();
    if (await limited.count()) {
      t.pass(`limited after ${i} applications`);
      await docShot(page, 'portal-public-rate-limited', { fullPage: false });
      assertNoErrors(t);
      return;
    }
    await page.reload();
  }
  t.fail('never rate limited');
});
