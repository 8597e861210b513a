// GET/POST /api/advertiser/members, PUT/DELETE /api/advertiser/members/:userId (CONTRACT "Dashboard
// sessions, workspaces, roles"). Only an active owner or admin of the workspace, with a dashboard session,
// manages members; an `affk_` key gets 403. The workspace is `?workspace_id=` (POST also takes it in the
// body), by default the one workspaceAccess picks (the caller's owner, then admin, membership).
// The rules are in service.ts.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError } from '../../../../shared/http/server.ts';
import { DateTime, Nullable, Obj, StringEnum, bodyObject, dataOf, workspaceRoute } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { manageWorkspace } from '../auth/access.ts';
import { ROLES } from '../auth/service.ts';
import * as dal from './dal.ts';
import {
  MEMBER_NOT_FOUND,
  OWNER_ONLY,
  checkRemoval,
  checkRoleChange,
  keepsNoKeys,
  parseRole,
  parseUserId,
  toMember,
} from './service.ts';

const member = Obj({
  user_id: Type.Integer(),
  email: Type.String(),
  name: Nullable(Type.String()),
  role: StringEnum(ROLES),
  status: StringEnum(['active', 'inactive']),
  created_at: DateTime({ description: 'When the user first joined' }),
});
const memberData = dataOf(member);
const userParams = Obj({ userId: Type.Integer() });

export function registerMemberRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;

  app.get(
    '/api/advertiser/members',
    workspaceRoute({
      summary: 'List the members of a workspace (active and inactive); owner or admin, session only',
      response: { 200: dataOf(Type.Array(member)) },
    }),
    async (req) => {
      const { workspaceId } = await manageWorkspace(sql, req);
      const rows = await dal.listMembers(sql, workspaceId);
      return { data: rows.map(toMember) };
    },
  );

  app.post(
    '/api/advertiser/members',
    workspaceRoute({
      summary: 'Add a signed-up user to the workspace, or reactivate an inactive member with a new role',
      body: Type.Object({
        email: Type.String({ description: 'Email the user signed up with (case-insensitive)' }),
        role: StringEnum(ROLES),
        workspace_id: Type.Optional(Type.Integer({ description: 'Same as the query parameter' })),
      }),
      response: { 201: memberData },
    }),
    async (req, reply) => {
      const access = await manageWorkspace(sql, req, req.body);
      const b = bodyObject(req.body);
      if (b.email === undefined || b.email === null || (typeof b.email === 'string' && !b.email.trim())) {
        throw new HttpError(400, 'email is required');
      }
      if (typeof b.email !== 'string') throw new HttpError(400, 'email must be a string');
      const role = parseRole(b.role);
      if (role === 'owner' && access.role !== 'owner') throw new HttpError(403, OWNER_ONLY);
      const userId = await dal.userIdByEmail(sql, b.email.trim());
      if (userId === null) throw new HttpError(404, 'User not found');
      if (!(await dal.addMember(sql, access.workspaceId, userId, role))) {
        throw new HttpError(409, 'User is already an active member of this workspace');
      }
      const row = await dal.readMember(sql, access.workspaceId, userId);
      return reply.code(201).send({ data: toMember(row!) });
    },
  );

  app.put(
    '/api/advertiser/members/:userId',
    workspaceRoute({
      summary: "Change an active member's role",
      params: userParams,
      body: Type.Object({ role: StringEnum(ROLES) }),
      response: { 200: memberData },
    }),
    async (req) => {
      const access = await manageWorkspace(sql, req);
      const userId = parseUserId((req.params as { userId?: unknown }).userId);
      const role = parseRole(bodyObject(req.body).role);
      const ws = access.workspaceId;
      const row = await sql.begin(async (tx) => {
        const lastOwner = await dal.lockAndCheckLastOwner(tx, ws, userId);
        const current = await dal.readMember(tx, ws, userId);
        if (!current) throw new HttpError(404, MEMBER_NOT_FOUND);
        if (!checkRoleChange({ actor: access.role, current, lastOwner }, role)) return current;
        await dal.setRole(tx, ws, userId, role);
        if (keepsNoKeys(role)) await dal.revokeKeysOf(tx, ws, userId);
        return { ...current, role };
      });
      return { data: toMember(row) };
    },
  );

  app.delete(
    '/api/advertiser/members/:userId',
    workspaceRoute({
      summary: 'Deactivate a membership (kept, status inactive); idempotent',
      description:
        'Returns 200 with the member, now `inactive`. Deactivating an inactive member changes nothing. ' +
        "The member's API keys in this workspace are revoked. The last active owner cannot be removed (409).",
      params: userParams,
      response: { 200: memberData },
    }),
    async (req) => {
      const access = await manageWorkspace(sql, req);
      const userId = parseUserId((req.params as { userId?: unknown }).userId);
      const ws = access.workspaceId;
      const row = await sql.begin(async (tx) => {
        const lastOwner = await dal.lockAndCheckLastOwner(tx, ws, userId);
        const current = await dal.readMember(tx, ws, userId);
        if (!current) throw new HttpError(404, MEMBER_NOT_FOUND);
        if (!checkRemoval({ actor: access.role, current, lastOwner })) return current;
        await dal.deactivate(tx, ws, userId);
        await dal.revokeKeysOf(tx, ws, userId);
        return { ...current, status: 'inactive' as const };
      });
      return { data: toMember(row) };
    },
  );
}
