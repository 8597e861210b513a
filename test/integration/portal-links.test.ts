// Invite and sign-in links carry their token after `#` (docs/security.md "Cross-site requests and tokens in
// links"), in a real browser against the real service with real mail (an SMTP receiver started here): the
// mails link `/partner/invite#<token>` and `/partner/magic#<token>`; following one, the page's address
// loses the token before anything else, no request the browser makes carries it (not in its path, not in
// a Referer: the portal's pages send Referrer-Policy: no-referrer); the links of older mails, the token in
// the path, still work, and their page is never cached; a reload once the token is gone says so.
import t from 'tap';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { launchBrowser } from '../helpers/browser.ts';
import type { Page } from '../helpers/browser.ts';
import { startSmtpSink } from '../helpers/smtp.ts';
import { apiProgram, tokenOf } from '../helpers/partners.ts';
import { invitePartner, openPortal, partnerAccount, pathOf } from '../helpers/portal.ts';

const sink = await startSmtpSink(t);
const svc = await startServices(t, ['web', 'outbox-relay', 'mail-worker'], {
  SMTP_URL: sink.url,
  MAIL_POLL_MS: '100',
});
testSql(t);
const api = (p: string) => `${svc.baseUrl}${p}`;
const browser = await launchBrowser(t);
const owner = await signup(svc, { workspace: 'Links & Co' });
const program = await apiProgram(svc, owner, { name: 'Linked shop' });

/** Every request the page makes: the path and query it sends, and its Referer (if any). */
function watch(page: Page): () => Promise<{ sent: string; referer: string | undefined }[]> {
  const seen: Promise<{ sent: string; referer: string | undefined }>[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    seen.push(r.allHeaders().then((h) => ({ sent: `${u.pathname}${u.search}`, referer: h['referer'] })));
  });
  return () => Promise.all(seen);
}

/** What the browser sent that holds `token`: nothing, when the token stayed in the page. */
async function leaks(
  requests: () => Promise<{ sent: string; referer: string | undefined }[]>,
  token: string,
) {
  return (await requests()).filter((r) => r.sent.includes(token) || (r.referer ?? '').includes(token));
}

t.test('an invite mail links /partner/invite#<token>; the page takes the token out at once', async (t) => {
  const inv = await invitePartner(svc.baseUrl, owner.session, program.id, { name: 'Hana Hash' });
  t.match(inv.inviteUrl, new RegExp(`^${svc.baseUrl}/partner/invite#pinv_[A-Za-z0-9_-]+$`), 'invite_url');
  const mail = await sink.waitForMail((m) => m.to.includes(inv.email), 60_000);
  const link = mail.links.find((l) => l.includes('/partner/invite'));
  t.equal(link, inv.inviteUrl, 'the mail holds the same link');
  t.match(mail.html, `href="${inv.inviteUrl}"`, 'and links it in the HTML body');
  const token = tokenOf(link!);

  const { page, assertNoErrors } = await openPortal(t, browser, svc.baseUrl);
  const requests = watch(page);
  const res = await page.goto(pathOf(link!), { waitUntil: 'load' });
  t.equal(res?.headers()['referrer-policy'], 'no-referrer', 'the portal page sends no Referer');
  await page.getByRole('heading', { name: 'Accept your invite' }).waitFor();
  t.equal(page.url(), api('/partner/invite'), 'the address holds no token');
  await page.getByLabel('Password').fill('hana hash password');
  await page.getByRole('button', { name: 'Accept invite' }).click();
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  await page.locator('.card', { hasText: 'Linked shop' }).waitFor();
  t.same(await leaks(requests, token), [], 'no request carried the token');
  t.ok(
    (await requests()).some((r) => r.sent === '/api/partner/auth/session/accept-invite'),
    'it was used',
  );
  assertNoErrors(t);
});

t.test('a sign-in link mail links /partner/magic#<token>; it signs in once', async (t) => {
  const p = await partnerAccount(svc.baseUrl, owner.session, program.id, { name: 'Mo Magic' });
  const asked = await postJson(api('/api/partner/auth/magic-link'), { email: p.email });
  t.equal(asked.status, 202);
  const mail = await sink.waitForMail(
    (m) => m.to.includes(p.email) && m.links.some((l) => l.includes('/partner/magic')),
    60_000,
  );
  const link = mail.links.find((l) => l.includes('/partner/magic'))!;
  t.match(link, new RegExp(`^${svc.baseUrl}/partner/magic#pmagic_[A-Za-z0-9_-]+$`), 'the token after #');
  const token = tokenOf(link);

  const { page, assertNoErrors } = await openPortal(t, browser, svc.baseUrl);
  const requests = watch(page);
  await page.goto(pathOf(link), { waitUntil: 'load' });
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  t.equal(page.url(), api('/partner/'), 'signed in, no token in the address');
  t.same(await leaks(requests, token), [], 'no request carried the token');
  assertNoErrors(t);
});

t.test('older links, the token in the path, still work and leave the address', async (t) => {
  const inv = await invitePartner(svc.baseUrl, owner.session, program.id, { name: 'Olga Old' });
  const token = tokenOf(inv.inviteUrl);
  const { page, assertNoErrors } = await openPortal(t, browser, svc.baseUrl);
  const requests = watch(page);
  const res = await page.goto(`/partner/invite/${token}`, { waitUntil: 'load' });
  t.equal(res?.headers()['cache-control'], 'no-store', 'a page whose URL holds a token is never cached');
  t.equal(res?.headers()['referrer-policy'], 'no-referrer');
  await page.getByRole('heading', { name: 'Accept your invite' }).waitFor();
  t.equal(page.url(), api('/partner/invite'), 'the token left the address');
  await page.getByLabel('Password').fill('olga old password');
  await page.getByRole('button', { name: 'Accept invite' }).click();
  await page.getByRole('heading', { name: 'Your programs' }).waitFor();
  t.same(
    await leaks(requests, token),
    [{ sent: `/partner/invite/${token}`, referer: undefined }],
    'only the page itself was asked for with it (the old link form), and no Referer carried it',
  );

  // An older sign-in link.
  await postJson(api('/api/partner/auth/magic-link'), { email: inv.email });
  const mail = await sink.waitForMail(
    (m) => m.to.includes(inv.email) && m.links.some((l) => l.includes('/partner/magic')),
    60_000,
  );
  const magic = tokenOf(mail.links.find((l) => l.includes('/partner/magic'))!);
  const other = await openPortal(t, browser, svc.baseUrl);
  await other.page.goto(`/partner/magic/${magic}`, { waitUntil: 'load' });
  await other.page.getByRole('heading', { name: 'Your programs' }).waitFor();
  t.equal(other.page.url(), api('/partner/'), 'signed in by the older link form');
  assertNoErrors(t);
  other.assertNoErrors(t);
});

t.test('a reload once the token left the address: the page says to open the link again', async (t) => {
  const inv = await invitePartner(svc.baseUrl, owner.session, program.id, { name: 'Rita Reload' });
  const { page, assertNoErrors } = await openPortal(t, browser, svc.baseUrl);
  await page.goto(pathOf(inv.inviteUrl), { waitUntil: 'load' });
  await page.getByRole('button', { name: 'Accept invite' }).waitFor();
  await page.reload({ waitUntil: 'load' });
  await page.getByRole('alert').filter({ hasText: 'This link has no token' }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Accept invite' }).count(), 0, 'no form without a token');
  // The link itself is still good (from another page: a link differing by its `#…` alone does not reload).
  await page.goto('about:blank');
  await page.goto(pathOf(inv.inviteUrl), { waitUntil: 'load' });
  await page.getByRole('button', { name: 'Accept invite' }).waitFor();
  assertNoErrors(t);
});
