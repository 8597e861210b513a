// Partner accounts for API tests: the advertiser adds a partner through the real API, the partner accepts
// the invite (whose token comes from invite_url) or follows a magic link (whose token is read from the
// mail the request queued in the outbox: no relay runs in these tests, so the rows stay there).
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../shared/db/sql.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import type { MailMessage } from '../../shared/contracts/mail.ts';
import { bearer, send } from './accounts.ts';
import type { User } from './accounts.ts';
import type { Services } from './stack.ts';

export const PARTNER_PASSWORD = 'partner password 1';
export const uniqEmail = (tag = 'partner') => `${tag}-${randomBytes(5).toString('hex')}@example.com`;

/** The mails queued for `to` (lower case) by this test file's web process, oldest first. */
export async function mailsTo(sql: Sql, prefix: string, to: string): Promise<MailMessage[]> {
  const rows = await sql<{ payload: MailMessage }[]>`
    select payload from outbox where topic = ${outboxTopic(prefix, 'mail')} and payload ->> 'to' = ${to}
    order by id`;
  return rows.map((r) => r.payload);
}

/** The token of an invite or magic-link URL: after `#` (or after the last `/` of an older link). */
export const tokenOf = (url: string) => url.slice(Math.max(url.lastIndexOf('/'), url.lastIndexOf('#')) + 1);

/** The newest magic-link token mailed to `to`. */
export async function magicTokenOf(sql: Sql, prefix: string, to: string): Promise<string | undefined> {
  const mails = (await mailsTo(sql, prefix, to)).filter((m) => m.template === 'magic_link');
  const last = mails.at(-1);
  return last ? tokenOf((last.data as { url: string }).url) : undefined;
}

export interface AddedPartner {
  partnerId: number;
  ppId: number;
  email: string;
  inviteUrl: string | null;
}

/** The advertiser adds a partner to the program (POST …/partners). */
export async function addPartner(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
  opts: { email?: string; name?: string; status?: 'approved' | 'pending' } = {},
): Promise<AddedPartner> {
  const email = opts.email ?? uniqEmail();
  const r = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${programId}/partners`,
    { name: opts.name ?? 'Pat Partner', email, ...(opts.status ? { status: opts.status } : {}) },
    bearer(owner.session),
  );
  if (r.status !== 201) throw new Error(`add partner: ${r.status} ${r.text}`);
  const d = r.body.data as {
    partner: { id: number };
    partner_program: { id: number };
    invite_url: string | null;
  };
  return { partnerId: d.partner.id, ppId: d.partner_program.id, email, inviteUrl: d.invite_url };
}

/** A program of the owner's workspace through the API, live (and public when asked). */
export async function apiProgram(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  fields: Record<string, unknown> = {},
): Promise<{ id: number; slug: string; token: string }> {
  const r = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`,
    { name: `Program ${randomBytes(3).toString('hex')}`, ...fields },
    bearer(owner.session),
  );
  if (r.status !== 201) throw new Error(`create program: ${r.status} ${r.text}`);
  const d = r.body.data as { id: number; slug: string; api_token: string };
  const live = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${d.id}/go-live`,
    undefined,
    bearer(owner.session),
  );
  if (live.status !== 200) throw new Error(`go live: ${live.status} ${live.text}`);
  return { id: d.id, slug: d.slug, token: d.api_token };
}

export interface Partner extends AddedPartner {
  /** `psess_…` */
  session: string;
  accountId: number;
}

/** A partner added by the advertiser who accepted its invite with a password: signed in. */
export async function invitedPartner(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
  opts: { email?: string; status?: 'approved' | 'pending' } = {},
): Promise<Partner> {
  const added = await addPartner(svc, owner, programId, opts);
  if (!added.inviteUrl) throw new Error('no invite_url');
  const r = await send('POST', `${svc.baseUrl}/api/partner/auth/accept-invite`, {
    token: tokenOf(added.inviteUrl),
    password: PARTNER_PASSWORD,
    name: 'Pat',
  });
  if (r.status !== 200) throw new Error(`accept invite: ${r.status} ${r.text}`);
  const d = r.body.data as { session_token: string; account: { id: number } };
  return { ...added, session: d.session_token, accountId: d.account.id };
}
