// The rules of applications, pure: the public program's answer, the application's fields, and what the
// applicant and the advertiser are told.
import { storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import type { NotificationInput } from '../../../../shared/db/notifications.ts';
import type { PublicProgramRow } from './dal.ts';

export const ERR = {
  notFound: 'Program not found',
  name: 'name is required and must be 1 to 200 characters',
  email: 'email must be a valid email address',
  website: 'website must be an http(s) URL of at most 500 characters',
  message: 'message must be a string of at most 2000 characters',
} as const;

/** A website: omitted, null, empty, or an http(s) URL of at most 500 characters. */
export function websiteError(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.trim().length > 500) return ERR.website;
  try {
    const u = new URL(v.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : ERR.website;
  } catch {
    return ERR.website;
  }
}

/** The public page's answer: the program's terms, or those of the group `?group=` named. */
export function toPublicProgram(
  r: PublicProgramRow,
  group?: { commission: unknown; hold_days: number | null },
) {
  return {
    name: r.name,
    slug: r.slug,
    description: r.description,
    currency: r.currency,
    cookie_window_days: r.cookie_window_days,
    commission: storedPolicy(group?.commission ?? r.commission),
    hold_days: group?.hold_days ?? r.hold_days ?? 30,
    min_payout_cents: r.min_payout_cents === null ? 0 : Number(r.min_payout_cents),
  };
}

/** What an application tells the advertiser's workspace and the applicant (both mailed). */
export function applicationNotices(a: {
  ppId: string;
  partnerId: number;
  programId: number;
  workspaceId: number;
  programName: string;
  name: string;
  email: string;
  approved: boolean;
}): NotificationInput[] {
  return [
    {
      notification_key: `partner_applied:${a.ppId}`,
      recipient_type: 'advertiser',
      partner_id: a.partnerId,
      workspace_id: a.workspaceId,
      program_id: a.programId,
      kind: 'partner_applied',
      title: a.approved
        ? `New partner in ${a.programName}: ${a.name}`
        : `New application to ${a.programName}: ${a.name}`,
      body: a.approved
        ? `${a.name} <${a.email}> applied and was approved automatically.`
        : `${a.name} <${a.email}> applied to be a partner. Approve or reject them on the Partners page.`,
      data: { partner_id: a.partnerId, program_id: a.programId, status: a.approved ? 'approved' : 'pending' },
      mail: true,
    },
    {
      notification_key: `application_received:${a.ppId}`,
      recipient_type: 'partner',
      partner_id: a.partnerId,
      workspace_id: null,
      program_id: a.programId,
      kind: 'application_received',
      title: a.approved ? `Welcome to ${a.programName}` : `${a.programName} received your application`,
      body: a.approved
        ? `You are approved as a partner of ${a.programName}; your referral link is in the partner portal.`
        : `${a.programName} will review your application; you will hear when they decide.`,
      data: { partner_id: a.partnerId, program_id: a.programId, status: a.approved ? 'approved' : 'pending' },
      mail: true,
    },
  ];
}
