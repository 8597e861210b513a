// What happens around a partner-program, in the transaction of the change (opened by operations.ts): the
// invite or notice when the advertiser adds a partner, the approval's link and notice, and the partner.*
// webhook events and notifications these write (CONTRACT part two; docs/partners.md). Everything that
// leaves the transaction (mail, webhook events, notifications) goes through the outbox of that transaction.
import type { Tx } from '../../../../shared/db/sql.ts';
import { queueNotifications } from '../../../../shared/db/notifications.ts';
import type { NotificationInput } from '../../../../shared/db/notifications.ts';
import { recordWebhookEvents } from '../../../../shared/db/webhook-events.ts';
import { insertLink } from '../links/dal.ts';
import type { LinkRow } from '../links/dal.ts';
import { shortLinkCandidates } from '../links/service.ts';
import { issueInvite } from '../partner-auth/invites.ts';
import type { IssuedInvite } from '../partner-auth/invites.ts';
import { isClaimed, partnerOfProgram } from './dal.ts';
import type { PartnerRow, PartnerProgramRow } from './dal.ts';
import { partnerView } from '../../../../shared/views/partner.ts';

/** KAFKA_PREFIX (the outbox topics) and PUBLIC_URL (an invite's link). */
export interface Ctx {
  kafkaPrefix: string;
  publicUrl: string;
}

/**
 * A partner.* event: its `data` is the partner in the program as the management API shows it (its view,
 * shared/views/partner.ts), read in the transaction of the change, as the change left it.
 */
export async function partnerEvent(
  tx: Tx,
  ctx: Ctx,
  type: 'partner.created' | 'partner.applied' | 'partner.approved',
  target: { programId: number; workspaceId: number; partnerId: number },
): Promise<void> {
  const row = (await partnerOfProgram(tx, target.programId, target.partnerId))!;
  await recordWebhookEvents(tx, ctx.kafkaPrefix, [
    { type, workspace_id: target.workspaceId, program_id: target.programId, data: partnerView(row) },
  ]);
}

/** One link with a generated short link (the approval's "a link if none"). */
export async function createGeneratedLink(
  tx: Tx,
  l: { programId: number; partnerId: number; ppId: number },
): Promise<LinkRow | undefined> {
  for (const shortLink of shortLinkCandidates(null)) {
    const row = await insertLink(tx, {
      shortLink,
      programId: l.programId,
      partnerId: l.partnerId,
      partnerProgramId: l.ppId,
    });
    if (row) return row;
  }
  return undefined;
}

/** The approval notice to the partner (mailed). */
export function approvedNotice(
  p: { ppId: number | string; partnerId: number | string; programId: number; programName: string },
  updatedAt: Date,
): NotificationInput {
  return {
    notification_key: `partner_approved:${p.ppId}:${updatedAt.getTime()}`,
    recipient_type: 'partner',
    partner_id: Number(p.partnerId),
    workspace_id: null,
    program_id: p.programId,
    kind: 'partner_approved',
    title: `You are approved for ${p.programName}`,
    body: `${p.programName} approved you as a partner. Your referral link is waiting in the partner portal.`,
    data: { partner_id: Number(p.partnerId), program_id: p.programId },
    mail: true,
  };
}

/**
 * In the transaction that added the partner to the program (by the advertiser): `partner.created`, and an
 * invite (mailed; its URL answered once) unless an account already claimed the record, which then only
 * gets a notice (it sees the new program already).
 */
export async function afterAdvertiserAdded(
  tx: Tx,
  ctx: Ctx,
  target: { programId: number; workspaceId: number },
  partner: PartnerRow,
  pp: PartnerProgramRow,
): Promise<IssuedInvite | null> {
  const [program] = await tx<{ name: string }[]>`select name from programs where id = ${target.programId}`;
  await partnerEvent(tx, ctx, 'partner.created', { ...target, partnerId: Number(partner.id) });
  if (await isClaimed(tx, partner.id)) {
    await queueNotifications(tx, ctx.kafkaPrefix, [
      {
        notification_key: `partner_added:${pp.id}`,
        recipient_type: 'partner',
        partner_id: Number(partner.id),
        workspace_id: null,
        program_id: target.programId,
        kind: 'partner_added',
        title: `You were added to ${program!.name}`,
        body: `${program!.name} added you as a partner; it is in your partner portal.`,
        data: { partner_id: Number(partner.id), program_id: target.programId },
        mail: true,
      },
    ]);
    return null;
  }
  return issueInvite(tx, ctx, { partnerId: Number(partner.id), programId: target.programId });
}
