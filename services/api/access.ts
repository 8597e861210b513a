// Who is calling and what they may do (spec section 5, CONTRACT "Dashboard sessions, workspaces, roles"
// and "Management API keys").
//
// Bearer kinds are told apart by prefix alone: `sess_` dashboard session, `affk_` management key; anything
// else on these routes (an `aff_` tracking token included) is a 401. Secrets are looked up by SHA-256.
// Program access: a program of a workspace the caller cannot see is 404 (its existence is not revealed);
// a visible program with a missing permission is 403.
import type { FastifyRequest } from 'fastify';
import type { Sql } from '../../shared/db/sql.ts';
import { HttpError } from '../../shared/http/server.ts';
import { isPlainObject } from '../../shared/json.ts';
import { hashSecret } from '../../shared/domain/secrets.ts';

export const SCOPES = [
  '*',
  'program:list',
  'program:read',
  'program:create',
  'program:update',
  'program:delete',
  'program:go_live',
  'program:regenerate-token',
  'dashboard:view',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Permissions checked by routes: the key scopes plus the dashboard reads. */
export type Permission = Exclude<Scope, '*'> | 'tracking:read' | 'tracking:list';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';
const ALL: Permission[] = [
  'program:list',
  'program:read',
  'program:create',
  'program:update',
  'program:delete',
  'program:go_live',
  'program:regenerate-token',
  'dashboard:view',
  'tracking:read',
  'tracking:list',
];
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(ALL),
  admin: new Set(ALL),
  member: new Set<Permission>([
    'tracking:read',
    'tracking:list',
    'dashboard:view',
    'program:list',
    'program:read',
  ]),
  viewer: new Set<Permission>(['tracking:read', 'dashboard:view', 'program:list', 'program:read']),
};

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

export async function authenticate(sql: Sql, req: FastifyRequest): Promise<Principal> {
  const header = req.headers.authorization;
  if (header === undefined) throw new HttpError(401, 'Authorization header is required');
  if (!header.startsWith('Bearer ')) throw new HttpError(401, 'Authorization must be "Bearer <credential>"');
  const token = header.slice(7).trim();
  if (token.startsWith('sess_')) {
    const [row] = await sql<{ id: string; user_id: string }[]>`
      select id, user_id from sessions
      where token_hash = ${hashSecret(token)} and revoked_at is null and expires_at > now()`;
    if (!row) throw new HttpError(401, 'Invalid or expired session');
    return { kind: 'session', userId: Number(row.user_id), sessionId: Number(row.id) };
  }
  if (token.startsWith('affk_')) {
    const [row] = await sql<
      {
        id: string;
        workspace_id: string;
        created_by: string;
        scopes: string[];
        program_scope: string[] | null;
      }[]
    >`
      update api_keys set last_used_at = now()
      where key_hash = ${hashSecret(token)} and status = 'active' and (expires_at is null or expires_at > now())
      returning id, workspace_id, created_by, scopes, program_scope::text[]`;
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
  throw new HttpError(401, 'A dashboard session or a management API key is required');
}

/** A positive integer from a path or query string (or a JSON number), else null. */
export function parseId(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : null;
  if (typeof v !== 'string' || !/^[0-9]{1,15}$/.test(v)) return null;
  const n = Number(v);
  return n > 0 ? n : null;
}

/** `workspace_id` from the query string, or from the body when the query has none; null = default. */
export function requestedWorkspace(query: unknown, body?: unknown): number | null {
  const q = isPlainObject(query) ? query.workspace_id : undefined;
  const b = isPlainObject(body) ? body.workspace_id : undefined;
  const raw = q ?? b;
  if (raw === undefined || raw === null) return null;
  const id = parseId(raw);
  if (id === null) throw new HttpError(400, 'workspace_id must be a positive integer');
  if (q !== undefined && b !== undefined && b !== null && parseId(b) !== id) {
    throw new HttpError(400, 'workspace_id differs between the query string and the body');
  }
  return id;
}

/** The caller the authenticated scope's onRequest hook resolved. */
export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new HttpError(401, 'A dashboard session or a management API key is required');
  return req.principal;
}

export function requireSession(p: Principal): Extract<Principal, { kind: 'session' }> {
  if (p.kind !== 'session') throw new HttpError(403, 'This operation needs a dashboard session');
  return p;
}

function keyAllows(p: Extract<Principal, { kind: 'api_key' }>, permission: Permission): void {
  // tracking:* permissions are dashboard (session) reads; keys reach them through dashboard:view.
  const scope = permission.startsWith('tracking:') ? 'dashboard:view' : permission;
  if (!p.scopes.includes('*') && !p.scopes.includes(scope))
    throw new HttpError(403, `API key lacks scope ${scope}`);
}

export interface WorkspaceAccess {
  workspaceId: number;
  /** The session user's role; for a key, the role it acts with ('admin': bounded by its scopes). */
  role: Role;
}

/** The workspace a workspace-level operation acts on, checked for `permission`. */
export async function workspaceAccess(
  sql: Sql,
  p: Principal,
  permission: Permission | 'manage',
  requested: number | null,
): Promise<WorkspaceAccess> {
  if (p.kind === 'api_key') {
    if (requested !== null && requested !== p.workspaceId) throw new HttpError(404, 'Workspace not found');
    if (permission === 'manage')
      throw new HttpError(403, 'Members and API keys are managed with a dashboard session');
    keyAllows(p, permission);
    return { workspaceId: p.workspaceId, role: 'admin' };
  }
  const rows = await sql<{ workspace_id: string; role: Role; status: string }[]>`
    select workspace_id, role, status from memberships
    where user_id = ${p.userId} ${requested === null ? sql`` : sql`and workspace_id = ${requested}`}
    order by (status = 'active') desc, (role = 'owner') desc, (role = 'admin') desc, created_at
    limit 1`;
  const m = rows[0];
  if (!m) throw new HttpError(404, 'Workspace not found');
  if (m.status !== 'active') throw new HttpError(403, 'Your membership of this workspace is inactive');
  if (permission === 'manage') {
    if (m.role !== 'owner' && m.role !== 'admin')
      throw new HttpError(403, 'Only owners and admins manage members and API keys');
  } else if (!ROLE_PERMISSIONS[m.role].has(permission)) {
    throw new HttpError(403, `Your role (${m.role}) lacks permission ${permission}`);
  }
  return { workspaceId: Number(m.workspace_id), role: m.role };
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
  if (!Number.isSafeInteger(programId) || programId <= 0) throw new HttpError(404, 'Program not found');
  if (p.kind === 'api_key') {
    const [row] = await sql<{ workspace_id: string }[]>`
      select workspace_id from programs where id = ${programId} and deleted_at is null`;
    if (!row || Number(row.workspace_id) !== p.workspaceId) throw new HttpError(404, 'Program not found');
    if (p.programScope !== null && !p.programScope.includes(programId)) {
      throw new HttpError(403, 'API key is not scoped to this program');
    }
    keyAllows(p, permission);
    return { programId, workspaceId: p.workspaceId, role: 'admin' };
  }
  const [row] = await sql<{ workspace_id: string; role: Role | null; status: string | null }[]>`
    select pr.workspace_id, m.role, m.status
    from programs pr left join memberships m on m.workspace_id = pr.workspace_id and m.user_id = ${p.userId}
    where pr.id = ${programId} and pr.deleted_at is null`;
  if (!row || row.role === null) throw new HttpError(404, 'Program not found');
  if (row.status !== 'active') throw new HttpError(403, 'Your membership of this workspace is inactive');
  if (!ROLE_PERMISSIONS[row.role].has(permission)) {
    throw new HttpError(403, `Your role (${row.role}) lacks permission ${permission}`);
  }
  return { programId, workspaceId: Number(row.workspace_id), role: row.role };
}
