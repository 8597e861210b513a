// The rules of workspace membership (CONTRACT "Dashboard sessions, workspaces, roles"), beyond the
// contract:
// - Only an owner grants the owner role or changes or removes an owner's membership (an admin could
//   otherwise promote themself and remove the owners).
// - The workspace always keeps an active owner: removing or demoting the last one is 409.
// - Removing a member, or demoting them to member/viewer, revokes the API keys they created in the
//   workspace: a key never keeps more power than its creator now has.
import { HttpError } from '../../../../shared/http/server.ts';
import { parseId } from '../../common.ts';
import { ROLES } from '../auth/service.ts';
import type { Role } from '../auth/service.ts';
import type { MemberRow } from './dal.ts';

export const LAST_OWNER = 'The workspace must keep at least one active owner';
export const OWNER_ONLY = 'Only an owner can grant the owner role or change or remove an owner';
export const MEMBER_NOT_FOUND = 'Member not found';

/** What is wrong with a role (the message), or null. */
export function roleError(v: unknown): string | null {
  if (v === undefined || v === null) return 'role is required';
  if (typeof v !== 'string' || !(ROLES as readonly string[]).includes(v)) {
    return 'role must be one of owner, admin, member, viewer';
  }
  return null;
}

export function parseRole(v: unknown): Role {
  const message = roleError(v);
  if (message !== null) throw new HttpError(400, message);
  return v as Role;
}

/** What is wrong with the email of a member to add (the message), or null; the route trims it. */
export function memberEmailError(v: unknown): string | null {
  if (v === undefined || v === null || (typeof v === 'string' && !v.trim())) return 'email is required';
  if (typeof v !== 'string') return 'email must be a string';
  return null;
}

export function parseUserId(v: unknown): number {
  const id = parseId(v);
  if (id === null) throw new HttpError(400, 'userId must be a positive integer');
  return id;
}

/** Who acts (their role in the workspace) on whom (the member now; lastOwner: the only active owner). */
interface Change {
  actor: Role;
  current: Pick<MemberRow, 'role' | 'status'>;
  lastOwner: boolean;
}

/** Whether `role` changes anything; 409 for an inactive member or the last owner, 403 for owner rules. */
export function checkRoleChange({ actor, current, lastOwner }: Change, role: Role): boolean {
  if (current.status !== 'active') {
    throw new HttpError(409, 'Member is inactive; add them again with POST /api/advertiser/members');
  }
  if (current.role === role) return false;
  if ((current.role === 'owner' || role === 'owner') && actor !== 'owner')
    throw new HttpError(403, OWNER_ONLY);
  if (lastOwner && role !== 'owner') throw new HttpError(409, LAST_OWNER);
  return true;
}

/** Whether removing the member changes anything (an inactive one stays as it is). */
export function checkRemoval({ actor, current, lastOwner }: Change): boolean {
  if (current.status === 'inactive') return false;
  if (current.role === 'owner' && actor !== 'owner') throw new HttpError(403, OWNER_ONLY);
  if (lastOwner) throw new HttpError(409, LAST_OWNER);
  return true;
}

/** A member with this role keeps no API keys: their keys in the workspace are revoked. */
export const keepsNoKeys = (role: Role): boolean => role === 'member' || role === 'viewer';

export const toMember = (r: MemberRow) => ({
  user_id: Number(r.user_id),
  email: r.email,
  name: r.name,
  role: r.role,
  status: r.status,
  created_at: r.created_at.toISOString(),
});
