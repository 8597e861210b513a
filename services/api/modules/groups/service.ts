// The rules of groups (CONTRACT part four "Groups"; docs/rewards.md), pure: what a create or update body
// means once its schema passed, the slug, messages, and a group as the API shows it. A group's `commission`
// is the policy's one schema (shared/domain/policy-schema.ts); the default group's is the program's.
import { HttpError } from '../../../../shared/http/server.ts';
import { parsePolicy, storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import type { CommissionPolicy } from '../../../../shared/domain/commission-policy.ts';
import { parseDiscount, storedDiscount } from '../../../../shared/domain/discount.ts';
import { iso } from '../../common.ts';
import type { GroupFields, GroupRow } from './dal.ts';

export const SLUG_RE = /^[a-z0-9-]{1,40}$/;

export const ERR = {
  notFound: 'Group not found',
  name: 'name is required and must be 1 to 100 characters',
  slug: 'slug must be 1 to 40 lowercase letters, digits or dashes',
  slugTaken: 'slug is already taken in this program',
  holdDays: 'hold_days must be an integer from 0 to 365, or null (the program’s)',
  autoApprove: 'auto_approve must be true, false or null (the program’s)',
  deleteDefault: 'The default group cannot be deleted',
  groupId: 'group_id must be the id of a group of this program',
  groupIdType: 'group_id must be a positive integer',
  locked: 'locked must be true or false',
  commissionOverride: 'commission must be a commission policy or null',
  notInProgram: 'Partner not found in this program',
  applyGroup: 'group must be the slug of a group of this program',
} as const;

/** A group body as its schema lets it through (on update only the fields given change). */
export interface GroupBody {
  name?: string;
  slug?: string;
  commission?: unknown;
  hold_days?: number | null;
  auto_approve?: boolean | null;
  discount?: unknown;
}

/** The normalised fields present in a validated body. */
export function groupFields(b: GroupBody): GroupFields {
  const f: GroupFields = {};
  if (b.name !== undefined) f.name = b.name.trim();
  if (b.slug !== undefined) f.slug = b.slug;
  if (b.commission !== undefined) {
    const policy = parsePolicy(b.commission);
    if (typeof policy === 'string') throw new HttpError(400, policy);
    f.commission = policy;
  }
  if (b.hold_days !== undefined) f.hold_days = b.hold_days;
  if (b.auto_approve !== undefined) f.auto_approve = b.auto_approve;
  if (b.discount !== undefined) {
    const discount = parseDiscount(b.discount);
    if (typeof discount === 'string') throw new HttpError(400, discount);
    f.discount = discount;
  }
  return f;
}

export { groupSlugCandidates } from '../../../../shared/rewards/groups.ts';

/** A group as the API shows it: the default group's policy is the program's, a null one too. */
export function toGroup(r: GroupRow) {
  return {
    id: Number(r.id),
    program_id: Number(r.program_id),
    name: r.name,
    slug: r.slug,
    is_default: r.is_default,
    commission: storedPolicy(r.commission ?? r.program_commission),
    hold_days: r.hold_days,
    auto_approve: r.auto_approve,
    discount: storedDiscount(r.discount),
    partners: Number(r.partners),
    created_at: iso(r.created_at)!,
  };
}

/** A partner override as the API shows it (null: none). */
export const overrideOf = (v: unknown): CommissionPolicy | null => (v === null ? null : storedPolicy(v));
