// Real-browser tests of the dashboard: Debian's chromium driven by playwright-core (issue 12). One browser
// per test file (launchBrowser), one context and page per subtest (openPage): each page collects its
// console errors and uncaught page errors so a test can assert there are none, and a subtest that fails
// leaves a screenshot in test/screenshots/<test name>.png (git-ignored). Everything is closed at teardown.
//
//   const svc = await startServices(t, ['web']);
//   const browser = await launchBrowser(t);
//   t.test('the login page', async (t) => {
//     const p = await openPage(t, browser, svc.baseUrl);
//     await p.goto('/');
//     await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
//     p.assertNoErrors(t);
//   });
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import type { Test } from 'tap';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { PASSWORD } from './accounts.ts';
import type { User } from './accounts.ts';

export type { Browser, BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(ROOT, 'test', 'screenshots');

/** What the helpers need of a tap test. */
export type BrowserTest = Pick<Test, 'teardown' | 'passing' | 'fullname' | 'same'>;

/** Launches headless chromium (closed at `t`'s teardown). */
export async function launchBrowser(t: Pick<BrowserTest, 'teardown'>): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

export interface PageOptions {
  /** Default 1280×800; 390×844 for the phone width the issue names. */
  viewport?: { width: number; height: number };
  /** HTTP failures the test provokes on purpose (a 403 for a viewer, say): not counted as errors. */
  allowStatus?: { status: number; url: RegExp }[];
  /** The browser's timezone (the dashboard shows times in the viewer's zone). */
  timezoneId?: string;
  /**
   * Logged in as this user (with accounts.ts's PASSWORD) before the page opens, through the real cookie
   * session: POST /api/auth/session sets the HttpOnly svc_session cookie in the context.
   */
  user?: Pick<User, 'email'>;
  /** Grants clipboard read and write, for a test that reads what a Copy button wrote. */
  clipboard?: boolean;
}

export interface PageHarness {
  page: Page;
  context: BrowserContext;
  baseUrl: string;
  /** Console errors and uncaught exceptions, in order, each one line. */
  errors: string[];
  /** Navigates to `path` on the base URL and waits for the load event. */
  goto(path: string): Promise<void>;
  /** One assertion: no console error and no page error so far. */
  assertNoErrors(t: Pick<BrowserTest, 'same'>, message?: string): void;
}

// tap's fullname is "<file> TAP <subtest> > <subtest>": the file without its folder, no "TAP".
const fileName = (name: string) =>
  name
    .replace(/^\S*\//, '')
    .replace(/\bTAP\b/g, ' ')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 150) || 'test';

/**
 * Saves a screenshot (the full page unless `fullPage` is false: the viewport) as
 * test/screenshots/<name>.png and returns its path.
 */
export async function screenshot(
  page: Page,
  name: string,
  opts: { fullPage?: boolean } = {},
): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${fileName(name)}.png`);
  // A bound of its own, generous: a busy machine takes seconds for a long page.
  await page.screenshot({ path, fullPage: opts.fullPage ?? true, timeout: 60_000 });
  return path;
}

/**
 * A fresh context (own cookies and storage) and page on `baseUrl`. At `t`'s teardown: a screenshot when
 * `t` failed, then the context is closed.
 */
export async function openPage(
  t: Pick<BrowserTest, 'teardown' | 'passing' | 'fullname'>,
  browser: Browser,
  baseUrl: string,
  opts: PageOptions = {},
): Promise<PageHarness> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: opts.viewport ?? { width: 1280, height: 800 },
    timezoneId: opts.timezoneId,
    // A person's Chrome: headless chromium says "HeadlessChrome", which the click classifier
    // (shared/tracking/quality.ts, isbot) rightly files as a bot, so a tracked click would count nowhere.
    userAgent: `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version()} Safari/537.36`,
  });
  // Generous: the machine is shared and slow; tests wait for conditions, never for time.
  context.setDefaultTimeout(20_000);
  context.setDefaultNavigationTimeout(30_000);
  if (opts.clipboard) {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  }
  if (opts.user) {
    const login = await context.request.post('/api/auth/session', {
      data: { email: opts.user.email, password: PASSWORD },
    });
    if (login.status() !== 200) {
      await context.close();
      throw new Error(`log in as ${opts.user.email}: ${login.status()} ${await login.text()}`);
    }
  }
  const page = await context.newPage();
  const errors: string[] = [];
  // The browser logs every non-2xx response as "Failed to load resource: … status of N": only those a
  // test provokes on purpose are not errors (the dashboard's own first load has none).
  const allowed = opts.allowStatus ?? [];
  const onConsole = (msg: ConsoleMessage) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const where = msg.location().url;
    const status = /status of (\d{3})/.exec(text);
    if (status && allowed.some((a) => a.status === Number(status[1]) && a.url.test(where.split('?')[0]!))) {
      return;
    }
    errors.push(`console: ${text}${where ? ` (${where})` : ''}`);
  };
  page.on('console', onConsole);
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  context.on('page', (p) => {
    p.on('console', onConsole);
    p.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  });
  t.teardown(async () => {
    if (!t.passing()) {
      try {
        const path = await screenshot(page, t.fullname);
        process.stderr.write(`# screenshot of the failure: ${path}\n`);
        if (errors.length) process.stderr.write(`# browser errors:\n#   ${errors.join('\n#   ')}\n`);
      } catch (err) {
        process.stderr.write(`# no screenshot: ${(err as Error).message}\n`);
      }
    }
    await context.close();
  });
  return {
    page,
    context,
    baseUrl,
    errors,
    async goto(path) {
      await page.goto(path, { waitUntil: 'load' });
    },
    assertNoErrors(t, message = 'no console or page errors') {
      t.same([...errors], [], message);
    },
  };
}

/**
 * The text of the focused element at the moment an element matching `selector` enters the page, for a
 * test that says "the question never shows without the focus on its answer"; when the focus is not in
 * (or on) that element, a "(the focus is elsewhere: TAG)" that no test expects. Call it before the action
 * that shows the element and await the result after: a MutationObserver notes the focus in the same
 * turn the element is added, so an implementation that focuses a frame later is caught every time,
 * not one run in a hundred. Undefined when nothing matched within `timeoutMs`. (Page code is a string:
 * the project's TypeScript has no DOM types.)
 */
export async function focusWhenShown(
  page: Page,
  selector: string,
  timeoutMs = 20_000,
): Promise<() => Promise<string | null | undefined>> {
  const key = JSON.stringify(`__focusWhenShown_${Math.random().toString(36).slice(2)}`);
  await page.evaluate(`void (window[${key}] = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      const shown = document.querySelector(${JSON.stringify(selector)});
      if (!shown) return;
      observer.disconnect();
      const focused = document.activeElement;
      if (focused && shown.contains(focused)) resolve(focused.textContent);
      else resolve('(the focus is elsewhere: ' + (focused ? focused.tagName : 'nothing') + ')');
    });
    observer.observe(document.body, { childList: true, subtree: true });
    setTimeout(() => { observer.disconnect(); resolve(undefined); }, ${timeoutMs});
  }))`);
  return () => page.evaluate<string | null | undefined>(`window[${key}]`);
}

/**
 * Waits until no section of the page says "Loading…" (the dashboard's Loading widget). A click aimed
 * while a section above is still loading can land where its content then pushes the target: the
 * Settings page's processor sections load beside the webhook form, and a click on "Add endpoint" that
 * lands on the moved page submits nothing (seen once in CI under load).
 */
export async function settled(page: Page): Promise<void> {
  await page.getByText('Loading…', { exact: true }).first().waitFor({ state: 'detached' });
}
