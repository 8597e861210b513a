// The membership writes, one transaction each (the unit-of-work rule: docs/architecture.md): the workspace's
// row lock with the actor's role read again under it (auth/access.ts `lockForManage`), the rules
// (service.ts), then the SQL (dal.ts). Two owners demoting each other at once cannot leave the workspace
// without one.
import type { Sql } from '../../../../shared/db/sql.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import type { Role } from '../auth/service.ts';
import { lockForManage } from '../auth/access.ts';
import type { Principal } from '../auth/access.ts';
import * as dal from './dal.ts';
import type { MemberRow } from './dal.ts';
import { MEMBER_NOT_FOUND, OWNER_ONLY, checkRemoval, checkRoleChange, keepsNoKeys } from './service.ts';

/** Who acts: the request's principal (its session's user is the actor). */
type Actor = { principal?: Principal };

/** Adds a signed-up user, or reactivates an inactive member with a new role. */
export function addMember(sql: Sql, ws: number, actor: Actor, email: string, role: Role): Promise<MemberRow> {
  return sql.begin(async (tx) => {
    const actorRole = await lockForManage(tx, ws, actor);
    if (role === 'owner' && actorRole !== 'owner') throw new HttpError(403, OWNER_ONLY);
    const userId = await dal.userIdByEmail(sql, email);
    if (userId === null) throw new HttpError(404, 'User not found');
    if (!(await dal.addMember(tx, ws, userId, role))) {
      throw new HttpError(409, 'User is already an active member of this workspace');
    }
    return (await dal.readMember(tx, ws, userId))!;
  });
}

/** Changes an active member's role (keys revoked when the role keeps none); unchanged when not allowed. */
export function changeRole(
  sql: Sql,
  ws: number,
  actor: Actor,
  userId: number,
  role: Role,
): Promise<MemberRow> {
  return sql.begin(async (tx) => {
    const actorRole = await lockForManage(tx, ws, actor);
    const lastOwner = await dal.isLastOwner(tx, ws, userId);
    const current = await dal.readMember(tx, ws, userId);
    if (!current) throw new HttpError(404, MEMBER_NOT_FOUND);
    if (!checkRoleChange({ actor: actorRole, current, lastOwner }, role)) return current;
    await dal.setRole(tx, ws, userId, role);
    if (keepsNoKeys(role)) await dal.revokeKeysOf(tx, ws, userId);
    return { ...current, role };
  });
}

/** Deactivates a membership and revokes the member's keys in the workspace; idempotent. */
export function removeMember(sql: Sql, ws: number, actor: Actor, userId: number): Promise<MemberRow> {
  return sql.begin(async (tx) => {
    const actorRole = await lockForManage(tx, ws, actor);
    const lastOwner = await dal.isLastOwner(tx, ws, userId);
    const current = await dal.readMember(tx, ws, userId);
    if (!current) throw new HttpError(404, MEMBER_NOT_FOUND);
    if (!checkRemoval({ actor: actorRole, current, lastOwner })) return current;
    await dal.deactivate(tx, ws, userId);
    await dal.revokeKeysOf(tx, ws, userId);
    return { ...current, status: 'inactive' as const };
  });
}
