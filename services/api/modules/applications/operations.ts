// An application, one transaction (the unit-of-work rule: docs/architecture.md "Commission lifecycle"): the
// partner added to the program (partners/operations.ts `addPartnerToProgram`, which opens it) and, in the
// same transaction, what the application writes around it: the link of an auto-approved partner, the
// applicant's unverified account (a password was typed), the claim or the mailed link that claims it
// (partner-claims/service.ts decides which), the applicant's and the advertiser's notifications, and
// `partner.applied` (and `partner.approved`). All of it commits or none does.
import { queueNotifications } from '../../../../shared/db/notifications.ts';
import type { ApiDeps } from '../../deps.ts';
import { accountByEmail, claim, hasClaimed, insertAccount } from '../partner-auth/dal.ts';
import { queueMagicLink } from '../partner-auth/invites.ts';
import { applicationClaim } from '../partner-claims/service.ts';
import { addPartnerToProgram } from '../partners/operations.ts';
import { createGeneratedLink, partnerEvent } from '../partners/review.ts';
import type { PartnerStatusValue } from '../partners/dal.ts';
import type { PublicProgramRow } from './dal.ts';
import { applicationNotices } from './service.ts';

export interface Application {
  name: string;
  /** Normalized (partner-auth/service.ts `normalEmail`). */
  email: string;
  /** The hash of the password typed with it, if any. */
  passwordHash: string | null;
  website: string | null;
  message: string | null;
  /** The applicant's own partner session's account, if any. */
  signedIn: number | null;
  /** The group `?group=` named (null: the default group), with its auto-approval (null: the program's). */
  group: { id: string; auto_approve: boolean | null } | null;
}

/**
 * Applies to the program: `existing` when the email's partner is in it already (nothing changes),
 * `currencyConflict` when its other programs use another currency, else the status of the new membership.
 */
export async function applyToProgram(
  deps: Pick<ApiDeps, 'sql' | 'kafkaPrefix' | 'publicUrl'>,
  program: PublicProgramRow,
  a: Application,
): Promise<
  | { existing: PartnerStatusValue }
  | { currencyConflict: string }
  | { created: 'approved' | 'pending' }
  | { badGroup: true }
> {
  const { email, name, passwordHash, signedIn } = a;
  const programId = Number(program.id);
  const workspaceId = Number(program.workspace_id);
  const autoApprove = a.group?.auto_approve ?? program.auto_approve;
  const status = autoApprove ? ('approved' as const) : ('pending' as const);
  const application = { website: a.website, message: a.message };
  const result = await addPartnerToProgram(
    deps.sql,
    workspaceId,
    programId,
    { name, email, status, source: 'application', application, groupId: a.group ? Number(a.group.id) : null },
    async (tx, partner, pp, recordCreated) => {
      const partnerId = Number(partner.id);
      if (status === 'approved') await createGeneratedLink(tx, { programId, partnerId, ppId: Number(pp.id) });
      // Nothing is claimed by the email string alone (partner-claims/service.ts): a password typed here
      // makes an unverified account, which sees nothing until a link mailed to the address is followed.
      let account = await accountByEmail(tx, email, true);
      if (!account && passwordHash !== null) {
        account = await insertAccount(tx, { email, name, passwordHash, verified: false });
      }
      const decision = applicationClaim({
        recordCreated,
        account,
        signedIn,
        alreadyClaimed: account !== undefined && (await hasClaimed(tx, Number(account.id), partnerId)),
      });
      if (decision.kind === 'claim') await claim(tx, signedIn!, [partnerId], 'application');
      else if (decision.kind === 'mail-claim-link')
        await queueMagicLink(tx, deps, email, { partnerId, programName: program.name });
      else if (decision.kind === 'mail-sign-in-link') await queueMagicLink(tx, deps, email);
      await queueNotifications(
        tx,
        deps.kafkaPrefix,
        applicationNotices({
          ppId: pp.id,
          partnerId,
          programId,
          workspaceId,
          programName: program.name,
          name: partner.name,
          email,
          approved: status === 'approved',
        }),
      );
      await partnerEvent(tx, deps, 'partner.applied', { programId, workspaceId, partnerId });
      if (status === 'approved') {
        await partnerEvent(tx, deps, 'partner.approved', { programId, workspaceId, partnerId });
      }
    },
  );
  if ('existing' in result) return { existing: result.existing.status };
  if ('currencyConflict' in result) return { currencyConflict: result.currencyConflict };
  if ('badGroup' in result) return result;
  return { created: status };
}
