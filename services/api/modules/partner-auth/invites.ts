// Issuing invites and sign-in links, in the caller's transaction: the token (shown once, stored as its
// SHA-256) and its mail queued in the outbox of the same transaction (nothing is mailed if the transaction
// rolls back). Invites: when an advertiser adds a partner and by POST …/partners/:partnerId/invite (the older
// live invites of the partner are revoked). Sign-in links: the magic-link request and applications.
import type { Tx } from '../../../../shared/db/sql.ts';
import { generateSecret, hashSecret } from '../../../../shared/domain/secrets.ts';
import { queueMail } from '../../../../shared/db/mail.ts';
import { insertInvite, insertMagicLink } from './dal.ts';
import { INVITE_TTL_MS, MAGIC_LINK_TTL_MS } from './service.ts';

/**
 * The links that carry a token: the token after `#`, so it is never sent to the server (nor kept in its
 * logs, a proxy's, or a Referer); the portal reads it from the address and then removes it (docs/portal.md).
 */
export const inviteLink = (publicUrl: string, token: string) => `${publicUrl}/partner/invite#${token}`;
export const magicLink = (publicUrl: string, token: string) => `${publicUrl}/partner/magic#${token}`;

export interface IssuedInvite {
  inviteUrl: string;
  expiresAt: Date;
}

export async function issueInvite(
  tx: Tx,
  ctx: { kafkaPrefix: string; publicUrl: string },
  target: { partnerId: number; programId: number },
): Promise<IssuedInvite> {
  const token = generateSecret('pinv_');
  const invite = await insertInvite(tx, {
    ...target,
    tokenHash: hashSecret(token),
    expiresAt: new Date(Date.now() + INVITE_TTL_MS),
  });
  const inviteUrl = inviteLink(ctx.publicUrl, token);
  const [names] = await tx<
    {
      email: string;
      partner_name: string;
      program_name: string;
      workspace_id: string | null;
      workspace_name: string | null;
    }[]
  >`
    select p.email, p.name as partner_name, pr.name as program_name, pr.workspace_id, w.name as workspace_name
    from partners p, programs pr left join workspaces w on w.id = pr.workspace_id
    where p.id = ${target.partnerId} and pr.id = ${target.programId}`;
  await queueMail(tx, ctx.kafkaPrefix, [
    {
      id: `invite:${invite.id}`,
      to: names!.email,
      template: 'partner_invite',
      data: {
        url: inviteUrl,
        program_name: names!.program_name,
        partner_name: names!.partner_name,
        ...(names!.workspace_name === null ? {} : { workspace_name: names!.workspace_name }),
      },
      workspace_id: names!.workspace_id === null ? null : Number(names!.workspace_id),
    },
  ]);
  return { inviteUrl, expiresAt: invite.expires_at };
}

/**
 * A sign-in link for `email` (15 minutes, one use), mailed through the outbox of `tx`: following it signs
 * in to the account of that email (created if missing) and proves its mailbox. After an application, `claim`
 * names the record it created: following the link then claims it (and the mail says what it confirms).
 */
export async function queueMagicLink(
  tx: Tx,
  ctx: { kafkaPrefix: string; publicUrl: string },
  email: string,
  claim: { partnerId: number; programName: string } | null = null,
): Promise<void> {
  const token = generateSecret('pmagic_');
  const id = await insertMagicLink(
    tx,
    email,
    hashSecret(token),
    new Date(Date.now() + MAGIC_LINK_TTL_MS),
    claim?.partnerId ?? null,
  );
  await queueMail(tx, ctx.kafkaPrefix, [
    {
      id: `magic:${id}`,
      to: email,
      template: 'magic_link',
      data: {
        url: magicLink(ctx.publicUrl, token),
        ...(claim ? { program_name: claim.programName } : {}),
      },
      workspace_id: null,
    },
  ]);
}
