// The rules of who may do what (spec section 5, CONTRACT "Dashboard sessions, workspaces, roles" and
// "Management API keys"), pure: roles and the permissions they grant, key scopes, the membership checks,
// and the signup input. access.ts applies them to a request; dal.ts reads what they need.
import { EMAIL_RE, HttpError } from '../../../../shared/http/server.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { parseId } from '../../ids.ts';
import { ROLES, SCOPES } from '../../../../shared/contracts/management.ts';
import type { Role, Scope } from '../../../../shared/contracts/management.ts';

export { ROLES, SCOPES };
export type { Role, Scope };

/** Permissions checked by routes: the key scopes plus the dashboard reads. */
export type Permission = Exclude<Scope, '*'> | 'tracking:read' | 'tracking:list';

/** Every permission: the key scopes but `*`, and the dashboard reads. */
const ALL: Permission[] = [
  ...SCOPES.filter((s): s is Exclude<Scope, '*'> => s !== '*'),
  'tracking:read',
  'tracking:list',
];
// Member and viewer also get partners:read and payouts:read, not webhooks:read (CONTRACT "Credentials,
// extended": webhook endpoints are integration settings of owners and admins).
const READ: Permission[] = [
  'tracking:read',
  'dashboard:view',
  'program:list',
  'program:read',
  'partners:read',
  'payouts:read',
];
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(ALL),
  admin: new Set(ALL),
  member: new Set<Permission>([...READ, 'tracking:list']),
  viewer: new Set<Permission>(READ),
};

export const PROGRAM_NOT_FOUND = 'Program not found';
export const WORKSPACE_NOT_FOUND = 'Workspace not found';
export const NO_CREDENTIAL = 'A dashboard session or a management API key is required';
const INACTIVE = 'Your membership of this workspace is inactive';

/**
 * The 403 of a key limited to some programs (`program_scope`) on a route that acts on the whole workspace
 * (CONTRACT part three): `API key is limited to programs 3, 7`, the ids in ascending order.
 */
export function programScopeError(programScope: readonly number[]): string {
  return `API key is limited to programs ${[...programScope].sort((a, b) => a - b).join(', ')}`;
}

/** The scope a key needs for `permission`: tracking:* are dashboard reads, reached through dashboard:view. */
export function scopeFor(permission: Permission): Exclude<Scope, '*'> {
  return permission.startsWith('tracking:') ? 'dashboard:view' : (permission as Exclude<Scope, '*'>);
}

/** 403 unless a key with `scopes` may do `permission`. */
export function checkKeyScopes(scopes: readonly string[], permission: Permission): void {
  const scope = scopeFor(permission);
  if (!scopes.includes('*') && !scopes.includes(scope))
    throw new HttpError(403, `API key lacks scope ${scope}`);
}

/**
 * 403 unless a membership of `role` and `status` may do `permission` ('manage': members and API keys,
 * owners and admins only).
 */
export function checkMembership(role: Role, status: string, permission: Permission | 'manage'): void {
  if (status !== 'active') throw new HttpError(403, INACTIVE);
  if (permission === 'manage') {
    if (role !== 'owner' && role !== 'admin')
      throw new HttpError(403, 'Only owners and admins manage members and API keys');
  } else if (!ROLE_PERMISSIONS[role].has(permission)) {
    throw new HttpError(403, `Your role (${role}) lacks permission ${permission}`);
  }
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

export interface Signup {
  email: string;
  password: string;
  name: string | null;
  /** The workspace's name: the one given, else "<name or email>'s workspace". */
  workspaceName: string;
}

// The signup fields' rules, each answering its message or null: the route's schema checks with them
// (Checked, in this order), and parseSignup applies them in the same order.
export function signupEmailError(v: unknown): string | null {
  const email = typeof v === 'string' ? v.trim() : '';
  return !EMAIL_RE.test(email) || email.length > 320 ? 'email must be a valid email address' : null;
}

export function passwordError(v: unknown): string | null {
  if (typeof v !== 'string' || v.length < 10) return 'password must be at least 10 characters';
  return v.length > 1024 ? 'password must be at most 1024 characters' : null;
}

/** name and workspace_name: omitted, null or a string of at most 200 characters. */
export const optionalNameError =
  (field: 'name' | 'workspace_name') =>
  (v: unknown): string | null =>
    v !== undefined && v !== null && (typeof v !== 'string' || v.length > 200)
      ? `${field} must be a string of at most 200 characters`
      : null;

/** The signup body, checked (each 400 with its own message). */
export function parseSignup(b: unknown): Signup {
  if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
  for (const message of [
    signupEmailError(b.email),
    passwordError(b.password),
    optionalNameError('name')(b.name),
    optionalNameError('workspace_name')(b.workspace_name),
  ]) {
    if (message !== null) throw new HttpError(400, message);
  }
  const email = (b.email as string).trim();
  const name = (b.name as string | undefined)?.trim() || null;
  const workspaceName = (b.workspace_name as string | undefined)?.trim() || `${name ?? email}'s workspace`;
  return { email, password: b.password as string, name, workspaceName };
}
