// GET/POST /api/advertiser/members, PUT/DELETE /api/advertiser/members/:userId (CONTRACT "Dashboard
// sessions, workspaces, roles"). Only an active owner or admin of the workspace, with a dashboard session,
// manages members; an `affk_` key gets 403. The workspace is `?workspace_id=` (POST also takes it in the
// body), by default the one workspaceAccess picks (the caller's owner, then admin, membership).
// The rules are in service.ts, each write's transaction in operations.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Checked } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import {
  DateTime,
  Nullable,
  Obj,
  StringEnum,
  WorkspaceIdField,
  dataOf,
  manageOf,
  requireBodyObject,
  requireManage,
  workspaceRoute,
} from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { ROLES } from '../auth/service.ts';
import type { Role } from '../auth/service.ts';
import { addMember, changeRole, removeMember } from './operations.ts';
import * as dal from './dal.ts';
import { memberEmailError, parseUserId, roleError, toMember } from './service.ts';

const member = Obj({
  user_id: Type.Integer(),
  email: Type.String(),
  name: Nullable(Type.String()),
  role: StringEnum(ROLES),
  status: StringEnum(['active', 'inactive']),
  created_at: DateTime({ description: 'When the user first joined' }),
});
const memberData = dataOf(member);
const userParams = Obj({ userId: Type.Integer({ minimum: 1 }) });

// Request schemas (shared/http/validation.ts): property order is the order of the checks.
const RoleField = Checked<Role>({ type: 'string', enum: [...ROLES] }, roleError);
const AddBody = Type.Object({
  workspace_id: WorkspaceIdField,
  email: Checked<string>(
    { type: 'string', pattern: '\\S', description: 'Email the user signed up with (case-insensitive)' },
    memberEmailError,
  ),
  role: RoleField,
});
const RoleBody = Type.Object({ role: RoleField });

/**
 * `:userId`, checked in preValidation on the raw path text (400 `userId must be a positive integer`, after
 * the workspace's 404/403 and before the body's 400s); read with userIdOf.
 */
const userIds = new WeakMap<FastifyRequest, number>();
const requireUserId = async (req: FastifyRequest): Promise<void> => {
  userIds.set(req, parseUserId((req.params as { userId?: unknown }).userId));
};
const userIdOf = (req: FastifyRequest): number => {
  const id = userIds.get(req);
  if (id === undefined) throw new Error('route has no requireUserId hook');
  return id;
};

export function registerMemberRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  app.get(
    '/api/advertiser/members',
    {
      preValidation: requireManage(sql),
      schema: workspaceRoute({
        summary: 'List the members of a workspace (active and inactive); owner or admin, session only',
        response: { 200: dataOf(Type.Array(member)) },
      }),
    },
    async (req) => {
      const { workspaceId } = manageOf(req);
      const rows = await dal.listMembers(sql, workspaceId);
      return { data: rows.map(toMember) };
    },
  );

  app.post(
    '/api/advertiser/members',
    {
      preValidation: [requireManage(sql, true), requireBodyObject],
      schema: workspaceRoute({
        summary: 'Add a signed-up user to the workspace, or reactivate an inactive member with a new role',
        body: AddBody,
        response: { 201: memberData },
      }),
    },
    async (req, reply) => {
      const ws = manageOf(req).workspaceId;
      const { role } = req.body;
      const row = await addMember(sql, ws, req, req.body.email.trim(), role);
      return reply.code(201).send({ data: toMember(row) });
    },
  );

  app.put(
    '/api/advertiser/members/:userId',
    {
      preValidation: [requireManage(sql), requireUserId, requireBodyObject],
      schema: workspaceRoute({
        summary: "Change an active member's role",
        params: userParams,
        body: RoleBody,
        response: { 200: memberData },
      }),
    },
    async (req) => {
      const ws = manageOf(req).workspaceId;
      const userId = userIdOf(req);
      const { role } = req.body;
      const row = await changeRole(sql, ws, req, userId, role);
      return { data: toMember(row) };
    },
  );

  app.delete(
    '/api/advertiser/members/:userId',
    {
      preValidation: [requireManage(sql), requireUserId],
      schema: workspaceRoute({
        summary: 'Deactivate a membership (kept, status inactive); idempotent',
        description:
          'Returns 200 with the member, now `inactive`. Deactivating an inactive member changes nothing. ' +
          "The member's API keys in this workspace are revoked. The last active owner cannot be removed (409).",
        params: userParams,
        response: { 200: memberData },
      }),
    },
    async (req) => {
      const ws = manageOf(req).workspaceId;
      const userId = userIdOf(req);
      const row = await removeMember(sql, ws, req, userId);
      return { data: toMember(row) };
    },
  );
}
