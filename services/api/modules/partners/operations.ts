// The partner writes, one transaction each (the unit-of-work rule: docs/architecture.md): adding a partner to
// a program (by the advertiser, or by an application, whose caller adds its own work to the transaction),
// the advertiser's review (approve / reject) under the partner-program's row lock, and a new invite. The SQL
// is dal.ts's; what each change writes around it (invites, notifications, webhook events) review.ts's.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { queueNotifications } from '../../../../shared/db/notifications.ts';
import { issueInvite } from '../partner-auth/invites.ts';
import type { IssuedInvite } from '../partner-auth/invites.ts';
import * as dal from './dal.ts';
import type { NewPartner, PartnerListRow, PartnerProgramRow, PartnerRow, PartnerStatusValue } from './dal.ts';
import { approvedNotice, createGeneratedLink, partnerEvent } from './review.ts';
import type { Ctx } from './review.ts';

/**
 * Adds the workspace's partner with this email (created if none) to the program in one transaction; `then`
 * runs in it with what was created (invites, notifications, webhook events, an application's account), so
 * all of it commits or none does. `existing` when it is in the program already.
 */
export function addPartnerToProgram<T = undefined>(
  sql: Sql,
  workspaceId: number,
  programId: number,
  p: NewPartner,
  then?: (tx: Tx, partner: PartnerRow, pp: PartnerProgramRow, recordCreated: boolean) => Promise<T>,
): Promise<
  | { partner: PartnerRow; pp: PartnerProgramRow; extra: T | undefined }
  | { currencyConflict: string }
  | { existing: PartnerRow & { status: PartnerStatusValue } }
  | { badGroup: true }
> {
  return sql.begin(async (tx) => {
    const added = await dal.addPartner(tx, workspaceId, programId, p);
    if (!('partner' in added)) return added;
    const extra = then ? await then(tx, added.partner, added.pp, added.recordCreated) : undefined;
    return { partner: added.partner, pp: added.pp, extra };
  });
}

/** A new invite for a partner of the program (the older one stops working); null when it is not in it. */
export function reissueInvite(
  sql: Sql,
  ctx: Ctx,
  programId: number,
  partnerId: number,
): Promise<IssuedInvite | null> {
  return sql.begin(async (tx) =>
    (await dal.partnerOfProgram(tx, programId, partnerId))
      ? issueInvite(tx, ctx, { partnerId, programId })
      : null,
  );
}

export type Decision = { action: 'approve' } | { action: 'reject'; reason: string | null };

/**
 * Approves or rejects the partner in the program: undefined when it is not in it. Approving creates a link
 * when the partner has none (also when it was approved already); a real status change notifies the
 * partner (mailed) and an approval records `partner.approved`. Repeating a decision changes nothing else.
 */
export function reviewPartner(
  sql: Sql,
  ctx: Ctx,
  programId: number,
  partnerId: number,
  d: Decision,
): Promise<PartnerListRow | undefined> {
  // A malformed path id (NaN, shared/http/validation.ts) is a partner not in the program, as an unknown id.
  if (!Number.isSafeInteger(partnerId)) return Promise.resolve(undefined);
  return sql.begin(async (tx) => {
    const pp = await dal.lockPartnerProgram(tx, programId, partnerId);
    if (!pp) return undefined;
    const workspaceId = Number(pp.workspace_id);
    const target: PartnerStatusValue = d.action === 'approve' ? 'approved' : 'rejected';
    const reason = d.action === 'reject' ? d.reason : null;
    const changed = pp.status !== target;
    if (changed || (target === 'rejected' && reason !== pp.rejection_reason)) {
      const updatedAt = await dal.setPartnerStatus(tx, pp.id, target, reason);
      if (changed && target === 'approved') {
        await queueNotifications(tx, ctx.kafkaPrefix, [
          approvedNotice({ ppId: pp.id, partnerId, programId, programName: pp.program_name }, updatedAt),
        ]);
        await partnerEvent(tx, ctx, 'partner.approved', { programId, workspaceId, partnerId });
      }
      if (changed && target === 'rejected') {
        await queueNotifications(tx, ctx.kafkaPrefix, [
          {
            notification_key: `partner_rejected:${pp.id}:${updatedAt.getTime()}`,
            recipient_type: 'partner',
            partner_id: partnerId,
            workspace_id: null,
            program_id: programId,
            kind: 'partner_rejected',
            title: `${pp.program_name} did not approve you as a partner`,
            body:
              reason === null
                ? `${pp.program_name} did not approve you as a partner.`
                : `${pp.program_name} did not approve you as a partner. Reason: ${reason}`,
            data: { partner_id: partnerId, program_id: programId, reason },
            mail: true,
          },
        ]);
      }
    }
    if (target === 'approved' && (await dal.linkCountOf(tx, pp.id)) === 0) {
      await createGeneratedLink(tx, { programId, partnerId, ppId: Number(pp.id) });
    }
    return dal.partnerOfProgram(tx, programId, partnerId);
  });
}
