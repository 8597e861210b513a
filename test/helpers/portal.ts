// What the partner portal's tests share: a partner with an account (the advertiser adds the partner, the
// partner accepts the invite through the API), a browser page signed in as that partner through the real
// cookie session, the mail a request queued (read from the outbox, for tests that run no mail worker), and
// the page-width check every portal test makes at 390 px.
import type { MailTemplate } from '../../shared/contracts/mail.ts';
import { randomBytes } from 'node:crypto';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import type { Sql } from '../../shared/db/sql.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import { postJson, waitFor } from './stack.ts';
import { bearer } from './accounts.ts';
import { openPage, screenshot } from './browser.ts';
import type { Browser, BrowserTest, Page, PageHarness, PageOptions } from './browser.ts';

export const PARTNER_PASSWORD = 'partner horse battery';

/**
 * The portal asks GET /api/partner/auth/session on boot, which is a 401 while signed out; the browser logs
 * that response as a console error that is not the page's.
 */
export const SIGNED_OUT_PROBE = { status: 401, url: /\/api\/partner\/auth\/session$/ };

export interface PartnerAccount {
  partnerId: number;
  email: string;
  name: string;
  /** `psess_…` from accepting the invite. */
  session: string;
}

/** Adds a partner to `programId` as `owner` and returns the answer's invite_url (and the partner's id). */
export async function invitePartner(
  baseUrl: string,
  ownerSession: string,
  programId: number,
  opts: { name?: string; email?: string; status?: 'approved' | 'pending' } = {},
): Promise<{ partnerId: number; email: string; name: string; inviteUrl: string }> {
  const email = opts.email ?? `partner-${randomBytes(4).toString('hex')}@partners.example`;
  const name = opts.name ?? 'Pat Partner';
  const r = await postJson(
    `${baseUrl}/api/advertiser/affiliate-programs/${programId}/partners`,
    { name, email, ...(opts.status ? { status: opts.status } : {}) },
    bearer(ownerSession),
  );
  if (r.status !== 201) throw new Error(`add partner: ${r.status} ${JSON.stringify(r.body)}`);
  const data = r.body.data as { partner: { id: number }; invite_url: string };
  return { partnerId: data.partner.id, email, name, inviteUrl: data.invite_url };
}

/** A partner of `programId` with an account (password PARTNER_PASSWORD), through the invite. */
export async function partnerAccount(
  baseUrl: string,
  ownerSession: string,
  programId: number,
  opts: { name?: string; email?: string } = {},
): Promise<PartnerAccount> {
  const inv = await invitePartner(baseUrl, ownerSession, programId, opts);
  const token = new URL(inv.inviteUrl).hash.slice(1);
  const r = await postJson(`${baseUrl}/api/partner/auth/accept-invite`, {
    token,
    password: PARTNER_PASSWORD,
    name: inv.name,
  });
  if (r.status !== 200) throw new Error(`accept invite: ${r.status} ${JSON.stringify(r.body)}`);
  const session = (r.body.data as { session_token: string }).session_token;
  return { partnerId: inv.partnerId, email: inv.email, name: inv.name, session };
}

/**
 * A page (openPage's) signed in as the partner `as` through the real cookie session (POST
 * /api/partner/auth/session in the context), or signed out. The signed-out probe's 401 is allowed.
 */
export async function openPortal(
  t: BrowserTest,
  browser: Browser,
  baseUrl: string,
  opts: PageOptions & { as?: { email: string; password?: string } } = {},
): Promise<PageHarness> {
  const { as, ...rest } = opts;
  const p = await openPage(t, browser, baseUrl, {
    ...rest,
    allowStatus: [SIGNED_OUT_PROBE, ...(rest.allowStatus ?? [])],
  });
  if (as) {
    const r = await p.context.request.post('/api/partner/auth/session', {
      data: { email: as.email, password: as.password ?? PARTNER_PASSWORD },
    });
    if (r.status() !== 200)
      throw new Error(`partner sign-in as ${as.email}: ${r.status()} ${await r.text()}`);
  }
  return p;
}

/** The URL of the newest mail of `template` to `to` that the web process queued (the outbox of `prefix`). */
export async function queuedMailUrl(
  sql: Sql,
  prefix: string,
  to: string,
  template: MailTemplate,
): Promise<string> {
  return waitFor(`a ${template} mail to ${to} in the outbox`, async () => {
    const [row] = await sql<{ url: string }[]>`
      select payload->'data'->>'url' as url from outbox
      where topic = ${outboxTopic(prefix, 'mail')} and lower(payload->>'to') = ${to.toLowerCase()}
        and payload->>'template' = ${template}
      order by id desc limit 1`;
    return row?.url ?? null;
  });
}

/** Whether the page scrolls sideways (the portal must not, at 390 px). */
export async function pageWiderThanViewport(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth + 1');
}

/** The path of an absolute URL the service made (invite_url, a mail link), for page.goto: with its `#…`. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}${u.hash}`;
};

/**
 * A screenshot for the docs: always test/screenshots/<name>.png (git-ignored); with SVC_DOC_IMAGES=1 also
 * docs/images/<name>.png, the pictures docs/portal.md and the README show (regenerated on purpose, never by
 * an ordinary test run).
 */
export async function docShot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  const path = await screenshot(page, name, opts);
  if (process.env.SVC_DOC_IMAGES === '1') await copyFile(path, join(ROOT, 'docs', 'images', `${name}.png`));
}
