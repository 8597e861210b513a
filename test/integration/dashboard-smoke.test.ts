// The dashboard in a real browser (chromium, test/helpers/browser.ts) against the real web service: the app
// loads at `/` and shows the log-in page without console errors; a history route loads on its own; the
// session cookie set by POST /api/auth/session is invisible to page scripts, and with it the app opens
// logged in, and logging out ends it.
import t from 'tap';
import { startServices } from '../helpers/stack.ts';
import { PASSWORD, signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage, settled } from '../helpers/browser.ts';

const svc = await startServices(t, ['web']);
const browser = await launchBrowser(t);

t.test('the app loads at / and shows the log-in page, with no console errors', async (t) => {
  const p = await openPage(t, browser, svc.baseUrl);
  await p.goto('/');
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  t.match(await p.page.title(), /svc/, 'the page title names the app (each page puts its own name first)');
  await p.goto('/programs/1/overview');
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  t.equal(new URL(p.page.url()).pathname, '/programs/1/overview', 'a history route loads the app');
  p.assertNoErrors(t);
});

t.test('at 390 pixels wide too', async (t) => {
  const p = await openPage(t, browser, svc.baseUrl, { viewport: { width: 390, height: 844 } });
  await p.goto('/login');
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  const overflow = await p.page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
  t.equal(overflow, false, 'no horizontal scrolling');
  p.assertNoErrors(t);
});

t.test('the HttpOnly session cookie: unreadable by scripts, logs the app in, logout ends it', async (t) => {
  const u = await signup(svc);
  const p = await openPage(t, browser, svc.baseUrl);
  await p.goto('/');
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  const status = await p.page.evaluate(
    async ([email, password]) =>
      (
        await fetch('/api/auth/session', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        })
      ).status,
    [u.email, PASSWORD],
  );
  t.equal(status, 200);
  t.equal(await p.page.evaluate('document.cookie'), '', 'document.cookie does not show the session');
  const [cookie] = await p.context.cookies();
  t.match(cookie, { name: 'svc_session', httpOnly: true, sameSite: 'Strict', path: '/' });

  await p.goto('/programs');
  await p.page.getByRole('navigation', { name: 'Workspace' }).waitFor();
  // The page's own requests answered first: one still in flight at the logout is answered 401, which the
  // browser logs as an error (seen once in CI under load).
  await settled(p.page);
  await p.page.getByRole('button', { name: 'Log out' }).click();
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  t.same(await p.context.cookies(), [], 'the cookie is cleared');
  p.assertNoErrors(t);
});
