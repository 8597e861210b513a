// GET/POST /api/advertiser/members, PUT/DELETE /api/advertiser/members/:userId (CONTRACT "Dashboard
// sessions, workspaces, roles"). Only an active owner or admin of the workspace, with a dashboard session,
// manages members; an `affk_` key gets 403. The workspace is `?workspace_id=` (POST also takes it in the
// body), by default the one workspaceAccess picks (the caller's owner, then admin, membership).
//
// Rules beyond the contract:
// - Only an owner grants the owner role or changes or removes an owner's membership (an admin could
//   otherwise promote themself and remove the owners).
// - The workspace always keeps an active owner: removing or demoting the last one is 409.
// - Removing a member, or demoting them to member/viewer, revokes the API keys they created in the
//   workspace: a key never keeps more power than its creator now has.
// Membership changes of one workspace are serialised by a row lock on the workspace, so two owners
// demoting each other at once cannot leave it without an owner.
import type { FastifyInstance } from 'fastify';
import type { Sql, Tx } from '../../../shared/db/sql.ts';
import { HttpError, noValidation } from '../../../shared/http/server.ts';
import { memberErrors, workspaceQuery } from '../common.ts';
import { isPlainObject } from '../../../shared/json.ts';
import { workspaceAccess, principalOf, parseId, requestedWorkspace } from '../access.ts';
import type { Role } from '../access.ts';
import type { ApiDeps } from '../deps.ts';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

function parseRole(v: unknown): Role {
  if (v === undefined || v === null) throw new HttpError(400, 'role is required');
  if (typeof v !== 'string' || !(ROLES as readonly string[]).includes(v)) {
    throw new HttpError(400, 'role must be one of owner, admin, member, viewer');
  }
  return v as Role;
}

function parseUserId(v: unknown): number {
  const id = parseId(v);
  if (id === null) throw new HttpError(400, 'userId must be a positive integer');
  return id;
}

const member = {
  type: 'object',
  properties: {
    user_id: { type: 'integer' },
    email: { type: 'string' },
    name: { type: ['string', 'null'] },
    role: { type: 'string', enum: ROLES },
    status: { type: 'string', enum: ['active', 'inactive'] },
    created_at: { type: 'string', format: 'date-time', description: 'When the user first joined' },
  },
} as const;
const memberData = { type: 'object', properties: { data: member } } as const;

interface MemberRow {
  user_id: string;
  email: string;
  name: string | null;
  role: Role;
  status: 'active' | 'inactive';
  created_at: Date;
}
interface Member {
  user_id: number;
  email: string;
  name: string | null;
  role: Role;
  status: 'active' | 'inactive';
  created_at: string;
}
const toMember = (r: MemberRow): Member => ({
  user_id: Number(r.user_id),
  email: r.email,
  name: r.name,
  role: r.role,
  status: r.status,
  created_at: r.created_at.toISOString(),
});

async function readMember(db: Sql | Tx, workspaceId: number, userId: number): Promise<MemberRow | undefined> {
  const [row] = await db<MemberRow[]>`
    select m.user_id, u.email, u.name, m.role, m.status, m.created_at
    from memberships m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId} and m.user_id = ${userId}`;
  return row;
}

/** Locks the workspace's membership changes and answers whether `userId` is its only active owner. */
async function lockAndCheckLastOwner(tx: Tx, workspaceId: number, userId: number): Promise<boolean> {
  await tx`select id from workspaces where id = ${workspaceId} for no key update`;
  const owners = await tx<{ user_id: string }[]>`
    select user_id from memberships where workspace_id = ${workspaceId} and role = 'owner' and status = 'active'`;
  return owners.length === 1 && Number(owners[0]!.user_id) === userId;
}

const LAST_OWNER = 'The workspace must keep at least one active owner';
const OWNER_ONLY = 'Only an owner can grant the owner role or change or remove an owner';

export function registerMemberRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const security = [{ session: [] }];

  app.get(
    '/api/advertiser/members',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'List the members of a workspace (active and inactive); owner or admin, session only',
        security,
        querystring: workspaceQuery,
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: member } } },
          ...memberErrors,
        },
      },
    },
    async (req) => {
      const requested = requestedWorkspace(req.query);
      const { workspaceId } = await workspaceAccess(sql, principalOf(req), 'manage', requested);
      const rows = await sql<MemberRow[]>`
        select m.user_id, u.email, u.name, m.role, m.status, m.created_at
        from memberships m join users u on u.id = m.user_id
        where m.workspace_id = ${workspaceId}
        order by m.created_at, m.user_id`;
      return { data: rows.map(toMember) };
    },
  );

  app.post(
    '/api/advertiser/members',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Add a signed-up user to the workspace, or reactivate an inactive member with a new role',
        security,
        querystring: workspaceQuery,
        body: {
          type: 'object',
          required: ['email', 'role'],
          properties: {
            email: { type: 'string', description: 'Email the user signed up with (case-insensitive)' },
            role: { type: 'string', enum: ROLES },
            workspace_id: { type: 'integer', description: 'Same as the query parameter' },
          },
        },
        response: { 201: memberData, ...memberErrors },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const requested = requestedWorkspace(req.query, b);
      const access = await workspaceAccess(sql, principalOf(req), 'manage', requested);
      if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
      if (b.email === undefined || b.email === null || (typeof b.email === 'string' && !b.email.trim())) {
        throw new HttpError(400, 'email is required');
      }
      if (typeof b.email !== 'string') throw new HttpError(400, 'email must be a string');
      const role = parseRole(b.role);
      if (role === 'owner' && access.role !== 'owner') throw new HttpError(403, OWNER_ONLY);
      const [user] = await sql<{ id: string }[]>`
        select id from users where lower(email) = lower(${b.email.trim()})`;
      if (!user) throw new HttpError(404, 'User not found');
      const userId = Number(user.id);
      // Insert, or reactivate an inactive membership; an active one is left alone (no row returned).
      const [added] = await sql<{ user_id: string }[]>`
        insert into memberships (user_id, workspace_id, role) values (${userId}, ${access.workspaceId}, ${role})
        on conflict (user_id, workspace_id) do update
          set role = excluded.role, status = 'active', updated_at = now()
          where memberships.status = 'inactive'
        returning user_id`;
      if (!added) throw new HttpError(409, 'User is already an active member of this workspace');
      const row = await readMember(sql, access.workspaceId, userId);
      return reply.code(201).send({ data: toMember(row!) });
    },
  );

  app.put(
    '/api/advertiser/members/:userId',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: "Change an active member's role",
        security,
        params: { type: 'object', properties: { userId: { type: 'integer' } } },
        querystring: workspaceQuery,
        body: {
          type: 'object',
          required: ['role'],
          properties: { role: { type: 'string', enum: ROLES } },
        },
        response: { 200: memberData, ...memberErrors },
      },
    },
    async (req) => {
      const requested = requestedWorkspace(req.query);
      const access = await workspaceAccess(sql, principalOf(req), 'manage', requested);
      const userId = parseUserId((req.params as { userId?: unknown }).userId);
      const b = req.body;
      if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
      const role = parseRole(b.role);
      const ws = access.workspaceId;
      const row = await sql.begin(async (tx) => {
        const lastOwner = await lockAndCheckLastOwner(tx, ws, userId);
        const current = await readMember(tx, ws, userId);
        if (!current) throw new HttpError(404, 'Member not found');
        if (current.status !== 'active') {
          throw new HttpError(409, 'Member is inactive; add them again with POST /api/advertiser/members');
        }
        if (current.role === role) return current;
        if ((current.role === 'owner' || role === 'owner') && access.role !== 'owner') {
          throw new HttpError(403, OWNER_ONLY);
        }
        if (lastOwner && role !== 'owner') throw new HttpError(409, LAST_OWNER);
        await tx`
          update memberships set role = ${role}, updated_at = now()
          where workspace_id = ${ws} and user_id = ${userId}`;
        if (role === 'member' || role === 'viewer') {
          await tx`
            update api_keys set status = 'revoked', revoked_at = now()
            where workspace_id = ${ws} and created_by = ${userId} and status = 'active'`;
        }
        return { ...current, role };
      });
      return { data: toMember(row) };
    },
  );

  app.delete(
    '/api/advertiser/members/:userId',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Deactivate a membership (kept, status inactive); idempotent',
        description:
          'Returns 200 with the member, now `inactive`. Deactivating an inactive member changes nothing. ' +
          "The member's API keys in this workspace are revoked. The last active owner cannot be removed (409).",
        security,
        params: { type: 'object', properties: { userId: { type: 'integer' } } },
        querystring: workspaceQuery,
        response: { 200: memberData, ...memberErrors },
      },
    },
    async (req) => {
      const requested = requestedWorkspace(req.query);
      const access = await workspaceAccess(sql, principalOf(req), 'manage', requested);
      const userId = parseUserId((req.params as { userId?: unknown }).userId);
      const ws = access.workspaceId;
      const row = await sql.begin(async (tx) => {
        const lastOwner = await lockAndCheckLastOwner(tx, ws, userId);
        const current = await readMember(tx, ws, userId);
        if (!current) throw new HttpError(404, 'Member not found');
        if (current.status === 'inactive') return current;
        if (current.role === 'owner' && access.role !== 'owner') throw new HttpError(403, OWNER_ONLY);
        if (lastOwner) throw new HttpError(409, LAST_OWNER);
        await tx`
          update memberships set status = 'inactive', updated_at = now()
          where workspace_id = ${ws} and user_id = ${userId}`;
        await tx`
          update api_keys set status = 'revoked', revoked_at = now()
          where workspace_id = ${ws} and created_by = ${userId} and status = 'active'`;
        return { ...current, status: 'inactive' as const };
      });
      return { data: toMember(row) };
    },
  );
}
