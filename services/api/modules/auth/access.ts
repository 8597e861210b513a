// Who is calling and what they may do, for one request. Bearer kinds are told apart by prefix alone:
// `sess_` dashboard session, `affk_` management key; anything else on these routes (an `aff_` tracking
// token included) is a 401. Secrets are looked up by SHA-256. Without an Authorization header the
// `svc_session` cookie is the session (cookie.ts: the dashboard's HttpOnly cookie and its CSRF check).
// Program access: a program of a workspace the caller cannot see is 404 (its existence is not revealed);
// a visible program with a missing permission is 403. The rules themselves are in service.ts.
import type { FastifyRequest } from 'fastify';
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { hashSecret } from '../../../../shared/domain/secrets.ts';
import { createAuthDal } from './dal.ts';
import { CSRF_ERROR, CSRF_HEADER, SAFE_METHODS, SESSION_COOKIE, csrfMatches, readCookie } from './cookie.ts';
import {
  NO_CREDENTIAL,
  PROGRAM_NOT_FOUND,
  WORKSPACE_NOT_FOUND,
  checkKeyScopes,
  checkMembership,
  programScopeError,
  requestedWorkspace,
} from './service.ts';
import type { Permission, Role } from './service.ts';

export {
  PROGRAM_NOT_FOUND,
  ROLE_PERMISSIONS,
  SCOPES,
  programScopeError,
  requestedWorkspace,
} from './service.ts';
export type { Permission, Role, Scope } from './service.ts';
export { parseId } from '../../ids.ts';

export type Principal =
  | { kind: 'session'; userId: number; sessionId: number }
  | {
      kind: 'api_key';
      keyId: number;
      workspaceId: number;
      userId: number;
      scopes: string[];
      programScope: number[] | null;
    };

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** Where a request's credential came from: the Authorization header wins over the session cookie. */
export interface Credential {
  token: string;
  via: 'header' | 'cookie';
}

/** The request's credential, or 401 when it has neither an Authorization header nor a session cookie. */
export function credentialOf(req: Pick<FastifyRequest, 'headers'>): Credential {
  const header = req.headers.authorization;
  if (header === undefined) {
    const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (cookie === undefined) throw new HttpError(401, 'Authorization header is required');
    return { token: cookie, via: 'cookie' };
  }
  if (!header.startsWith('Bearer ')) throw new HttpError(401, 'Authorization must be "Bearer <credential>"');
  return { token: header.slice(7).trim(), via: 'header' };
}

/**
 * The caller of an authenticated route: a `sess_` session from the Authorization header or the
 * `svc_session` cookie, or an `affk_` key (header only). A cookie-authenticated request that may change
 * something (not GET/HEAD/OPTIONS) must carry the session's `X-CSRF-Token`, else 403.
 */
export async function authenticate(sql: Sql, req: FastifyRequest): Promise<Principal> {
  const { token, via } = credentialOf(req);
  const dal = createAuthDal(sql);
  if (via === 'cookie' && !token.startsWith('sess_')) throw new HttpError(401, 'Invalid or expired session');
  if (token.startsWith('sess_')) {
    const row = await dal.sessionByHash(hashSecret(token));
    if (!row) throw new HttpError(401, 'Invalid or expired session');
    if (via === 'cookie' && !SAFE_METHODS.has(req.method) && !csrfMatches(token, req.headers[CSRF_HEADER])) {
      throw new HttpError(403, CSRF_ERROR);
    }
    return { kind: 'session', userId: Number(row.user_id), sessionId: Number(row.id) };
  }
  if (token.startsWith('affk_')) {
    const row = await dal.useKeyByHash(hashSecret(token));
    if (!row) throw new HttpError(401, 'Invalid, revoked or expired API key');
    return {
      kind: 'api_key',
      keyId: Number(row.id),
      workspaceId: Number(row.workspace_id),
      userId: Number(row.created_by),
      scopes: row.scopes,
      programScope: row.program_scope === null ? null : row.program_scope.map(Number),
    };
  }
  throw new HttpError(401, NO_CREDENTIAL);
}

/** The caller the authenticated scope's onRequest hook resolved. */
export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new HttpError(401, NO_CREDENTIAL);
  return req.principal;
}

export function requireSession(p: Principal): Extract<Principal, { kind: 'session' }> {
  if (p.kind !== 'session') throw new HttpError(403, 'This operation needs a dashboard session');
  return p;
}

export interface WorkspaceAccess {
  workspaceId: number;
  /** The session user's role; for a key, the role it acts with ('admin': bounded by its scopes). */
  role: Role;
  /**
   * The programs the caller is limited to: a key's `program_scope`, null for every program (a session, a
   * key without one). Only scopedWorkspaceAccess answers non-null; workspaceAccess refuses such a key.
   */
  programScope: number[] | null;
}

/**
 * The workspace a workspace-level operation acts on, checked for `permission`. The route acts on the whole
 * workspace, so a key limited to some programs is 403 `API key is limited to programs <ids>` (after the
 * 404 of another workspace, before its scopes). Routes that keep such a key inside its programs themselves
 * use scopedWorkspaceAccess.
 */
export function workspaceAccess(
  sql: Sql,
  p: Principal,
  permission: Permission | 'manage',
  requested: number | null,
): Promise<WorkspaceAccess> {
  return resolveWorkspace(sql, p, permission, requested, true);
}

/**
 * workspaceAccess for the routes that limit what they show and change to the caller's `programScope`
 * (the program list, webhook endpoints): a key limited to some programs passes, and the route must apply
 * the scope it gets back.
 */
export function scopedWorkspaceAccess(
  sql: Sql,
  p: Principal,
  permission: Permission,
  requested: number | null,
): Promise<WorkspaceAccess> {
  return resolveWorkspace(sql, p, permission, requested, false);
}

async function resolveWorkspace(
  sql: Sql,
  p: Principal,
  permission: Permission | 'manage',
  requested: number | null,
  wholeWorkspace: boolean,
): Promise<WorkspaceAccess> {
  if (p.kind === 'api_key') {
    if (requested !== null && requested !== p.workspaceId) throw new HttpError(404, WORKSPACE_NOT_FOUND);
    if (wholeWorkspace && p.programScope !== null)
      throw new HttpError(403, programScopeError(p.programScope));
    if (permission === 'manage')
      throw new HttpError(403, 'Members and API keys are managed with a dashboard session');
    checkKeyScopes(p.scopes, permission);
    return { workspaceId: p.workspaceId, role: 'admin', programScope: p.programScope };
  }
  const m = await createAuthDal(sql).membership(p.userId, requested);
  if (!m) throw new HttpError(404, WORKSPACE_NOT_FOUND);
  checkMembership(m.role, m.status, permission);
  return { workspaceId: Number(m.workspace_id), role: m.role, programScope: null };
}

export interface ProgramAccess {
  programId: number;
  workspaceId: number;
  role: Role;
}

/**
 * Checks that the caller may do `permission` on the program. 404 when the program is not in a workspace
 * the caller can see (or does not exist, or is deleted); 403 when it is visible but the permission is
 * missing, the membership is inactive, or a key's program_scope excludes it.
 */
export async function programAccess(
  sql: Sql,
  p: Principal,
  programId: number,
  permission: Permission,
): Promise<ProgramAccess> {
  if (!Number.isSafeInteger(programId) || programId <= 0) throw new HttpError(404, PROGRAM_NOT_FOUND);
  const dal = createAuthDal(sql);
  if (p.kind === 'api_key') {
    const row = await dal.liveProgramWorkspace(programId);
    if (!row || Number(row.workspace_id) !== p.workspaceId) throw new HttpError(404, PROGRAM_NOT_FOUND);
    if (p.programScope !== null && !p.programScope.includes(programId)) {
      throw new HttpError(403, 'API key is not scoped to this program');
    }
    checkKeyScopes(p.scopes, permission);
    return { programId, workspaceId: p.workspaceId, role: 'admin' };
  }
  const row = await dal.programMembership(programId, p.userId);
  if (!row || row.role === null) throw new HttpError(404, PROGRAM_NOT_FOUND);
  checkMembership(row.role, row.status ?? 'inactive', permission);
  return { programId, workspaceId: Number(row.workspace_id), role: row.role };
}

/**
 * The workspace a member or API-key route manages: `workspace_id` from the query (or the body), checked
 * for 'manage' (an owner's or admin's session).
 */
export function manageWorkspace(
  sql: Sql,
  req: { principal?: Principal; query: unknown },
  body?: unknown,
): Promise<WorkspaceAccess> {
  const requested = requestedWorkspace(req.query, body);
  return workspaceAccess(sql, principalOf(req), 'manage', requested);
}

/**
 * Takes the workspace's membership lock (one row lock on the workspace: membership and key changes of one
 * workspace are serialised by it) and checks, under it, that the session user may still manage the
 * workspace. requireManage checked before the lock; a demotion may have committed while the request waited,
 * and must win. Returns the user's role now.
 */
export async function lockForManage(
  tx: Tx,
  workspaceId: number,
  req: { principal?: Principal },
): Promise<Role> {
  const userId = requireSession(principalOf(req)).userId;
  await tx`select id from workspaces where id = ${workspaceId} for no key update`;
  const [m] = await tx<{ role: Role; status: string }[]>`
    select role, status from memberships where workspace_id = ${workspaceId} and user_id = ${userId}`;
  if (!m) throw new HttpError(404, WORKSPACE_NOT_FOUND);
  checkMembership(m.role, m.status, 'manage');
  return m.role;
}
