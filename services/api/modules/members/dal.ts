// The SQL of workspace membership. Membership changes of one workspace are serialised by a row lock on
// the workspace (lockForManage in auth/access.ts), under which the actor's own role is read again, so two owners demoting each other at once cannot leave it without
// an owner.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { Role } from '../auth/service.ts';

export interface MemberRow {
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  status: 'active' | 'inactive';
  created_at: Date;
}

// A fragment of the caller's own connection or transaction: `${members(db)} where ...`.
const members = (db: Sql | Tx) => db`
  select m.user_id, u.email, u.name, m.role, m.status, m.created_at
  from memberships m join users u on u.id = m.user_id`;

export function listMembers(sql: Sql, workspaceId: number) {
  return sql<
    MemberRow[]
  >`${members(sql)} where m.workspace_id = ${workspaceId} order by m.created_at, m.user_id`;
}

export async function readMember(db: Sql | Tx, workspaceId: number, userId: number) {
  const [row] = await db<MemberRow[]>`
    ${members(db)} where m.workspace_id = ${workspaceId} and m.user_id = ${userId}`;
  return row;
}

export async function userIdByEmail(sql: Sql, email: string): Promise<number | null> {
  const [user] = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email})`;
  return user ? Number(user.id) : null;
}

/** Inserts, or reactivates an inactive membership; false when the user is already an active member. */
export async function addMember(
  sql: Sql | Tx,
  workspaceId: number,
  userId: number,
  role: Role,
): Promise<boolean> {
  const [added] = await sql<{ user_id: string }[]>`
    insert into memberships (user_id, workspace_id, role) values (${userId}, ${workspaceId}, ${role})
    on conflict (user_id, workspace_id) do update
      set role = excluded.role, status = 'active', updated_at = now()
      where memberships.status = 'inactive'
    returning user_id`;
  return added !== undefined;
}

/** Whether `userId` is the workspace's only active owner; call under lockForManage (auth/access.ts). */
export async function isLastOwner(tx: Tx, workspaceId: number, userId: number): Promise<boolean> {
  const owners = await tx<{ user_id: string }[]>`
    select user_id from memberships where workspace_id = ${workspaceId} and role = 'owner' and status = 'active'`;
  return owners.length === 1 && Number(owners[0]!.user_id) === userId;
}

export async function setRole(tx: Tx, workspaceId: number, userId: number, role: Role): Promise<void> {
  await tx`
    update memberships set role = ${role}, updated_at = now()
    where workspace_id = ${workspaceId} and user_id = ${userId}`;
}

export async function deactivate(tx: Tx, workspaceId: number, userId: number): Promise<void> {
  await tx`
    update memberships set status = 'inactive', updated_at = now()
    where workspace_id = ${workspaceId} and user_id = ${userId}`;
}

/** Revokes the active API keys `userId` created in the workspace. */
export async function revokeKeysOf(tx: Tx, workspaceId: number, userId: number): Promise<void> {
  await tx`
    update api_keys set status = 'revoked', revoked_at = now()
    where workspace_id = ${workspaceId} and created_by = ${userId} and status = 'active'`;
}
