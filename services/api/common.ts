// Small pieces every management route module uses: security, path ids, timestamps, unique violations,
// the workspace query, the error statuses of workspace-level routes and response-schema helpers.
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { ObjectOptions, SchemaOptions, Static, TProperties, TSchema } from '@sinclair/typebox';
import type { Sql } from '../../shared/db/sql.ts';
import { HttpError, errorResponses, requiresBody } from '../../shared/http/server.ts';
import { MAX_QUERY_INTEGER, pathId } from '../../shared/http/validation.ts';
import { isPlainObject } from '../../shared/json.ts';
import {
  manageWorkspace,
  principalOf,
  programAccess,
  requestedWorkspace,
  scopedWorkspaceAccess,
  workspaceAccess,
} from './modules/auth/access.ts';
import type { Permission, ProgramAccess, WorkspaceAccess } from './modules/auth/access.ts';

export const managementSecurity: Record<string, string[]>[] = [
  { session: [] },
  { sessionCookie: [] },
  { apiKey: [] },
];

export { pathId };

export const iso = (d: Date | string | null): string | null =>
  d === null ? null : (d instanceof Date ? d : new Date(d)).toISOString();

/** Postgres unique violation (optionally on a given constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint_name === constraint);
}

export const memberErrors = errorResponses(400, 401, 403, 404, 409);

// ---- schema-validated routes (see docs/api-modules.md) ----

export { PROGRAM_NOT_FOUND } from './modules/auth/service.ts';

/** `:id` of /api/advertiser/affiliate-programs/:id/… */
export const ProgramParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'Program id' }) });

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the requireProgram hook: the program the route acts on, checked for its permission. */
    programAccess?: ProgramAccess;
    /** Set by the requireManage hook: the workspace a member or API-key route manages. */
    manageAccess?: WorkspaceAccess;
    /** Set by the requireWorkspace hook: the workspace a workspace-level route acts on. */
    workspaceAccess?: WorkspaceAccess;
  }
}

/**
 * A preValidation hook: the caller must have `permission` on the program `:id`. It runs before the body is
 * validated, so a caller who may not touch the program learns nothing from its 400s (404/403 come first).
 */
export function requireProgram(sql: Sql, permission: Permission) {
  return async (req: FastifyRequest): Promise<void> => {
    // preValidation runs before the params are converted: `id` is still the raw path text.
    const id = (req.params as { id?: unknown }).id;
    req.programAccess = await programAccess(sql, principalOf(req), pathId(id), permission);
  };
}

/** What requireProgram found. */
export function programOf(req: FastifyRequest): ProgramAccess {
  if (!req.programAccess) throw new Error('route has no requireProgram hook');
  return req.programAccess;
}

/**
 * A preValidation hook of the member and API-key routes: the caller manages the workspace of
 * `?workspace_id=` (or the body's, with `withBody`), so its 400 on workspace_id and its 404/403 come before
 * any 400 of the body. Result via manageOf(req).
 */
export function requireManage(sql: Sql, withBody = false) {
  return async (req: FastifyRequest): Promise<void> => {
    req.manageAccess = await manageWorkspace(sql, req, withBody ? req.body : undefined);
  };
}

/** What requireManage found. */
export function manageOf(req: FastifyRequest): WorkspaceAccess {
  if (!req.manageAccess) throw new Error('route has no requireManage hook');
  return req.manageAccess;
}

/**
 * A preValidation hook of workspace-level routes: the caller may do `permission` on the workspace of
 * `?workspace_id=` (or the body's), so its 400 on workspace_id and its 404/403 come before any 400 of the
 * body. A key limited to some programs is 403 (workspaceAccess), unless `scoped`: then the route applies
 * the scope itself (scopedWorkspaceAccess). Result via workspaceOfReq(req).
 */
export function requireWorkspace(sql: Sql, permission: Permission, scoped = false) {
  return async (req: FastifyRequest): Promise<void> => {
    const check = scoped ? scopedWorkspaceAccess : workspaceAccess;
    req.workspaceAccess = await check(sql, principalOf(req), permission, workspaceOf(req));
  };
}

/** What requireWorkspace found. */
export function workspaceOfReq(req: FastifyRequest): WorkspaceAccess {
  if (!req.workspaceAccess) throw new Error('route has no requireWorkspace hook');
  return req.workspaceAccess;
}

/**
 * A preValidation step for routes whose body is required: no body at all (or JSON null) is `Request body
 * must be a JSON object`, as the hand validation answered (the schema validator reads it as {}).
 */
export const requireBodyObject = requiresBody(
  async (req: FastifyRequest): Promise<void> => void bodyObject(req.body),
);

/**
 * `workspace_id` from the query or the body (null: the default workspace); a preValidation step, since the
 * query is checked before the body's fields. A body that is not an object is left to the schema's 400.
 */
export function workspaceOf(req: FastifyRequest): number | null {
  const b = req.body;
  if (b !== undefined && b !== null && !isPlainObject(b)) return null;
  return requestedWorkspace(req.query, b);
}

const WORKSPACE_ID_ERROR = 'workspace_id must be a positive integer';
const WORKSPACE_ID_DOC =
  'Workspace to act on; default: the first workspace where the caller is owner, then admin.';

/** `?workspace_id=` of workspace-level routes. */
export const WorkspaceIdQuery = Type.Object({
  workspace_id: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_QUERY_INTEGER,
      description: WORKSPACE_ID_DOC,
      errorMessage: WORKSPACE_ID_ERROR,
    }),
  ),
});

/** `workspace_id` in a body: a positive integer, as a number or decimal text (what requestedWorkspace takes). */
export const WorkspaceIdField = Type.Optional(
  Type.Union(
    [
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
      Type.String({ pattern: '^(?=[0-9]{1,15}$)0*[1-9][0-9]*$' }),
      Type.Null(),
    ],
    { description: WORKSPACE_ID_DOC, errorMessage: WORKSPACE_ID_ERROR },
  ),
);
export { parseId } from './ids.ts';

// Response-schema helpers (TypeBox). Response objects list their fields without `required`, as they
// always have: the schemas document and serialise, the handlers build every field.

/** An object whose properties are all optional (no `required` list). */
export const Obj = <P extends TProperties>(props: P, options?: ObjectOptions) =>
  Type.Partial(Type.Object(props, options));

/** `{ type: [T's type, 'null'] }`: the schema, or null. */
export const Nullable = <T extends TSchema>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });

/** `{ data: schema }`, the envelope of every management answer. */
export const dataOf = <T extends TSchema>(schema: T) => Obj({ data: schema });

/** A string of one of the given values, documented as `enum` (as the schemas always were). */
export const StringEnum = <V extends string>(values: readonly V[], options?: SchemaOptions) =>
  Type.Unsafe<V>({ type: 'string', enum: values, ...options });

export const DateTime = (options?: SchemaOptions) => Type.String({ format: 'date-time', ...options });

/** Routes only a dashboard session may call. */
export const sessionSecurity: Record<string, string[]>[] = [{ session: [] }, { sessionCookie: [] }];

/** The body as a JSON object, else 400 (for routes whose body is required). */
export function bodyObject(b: unknown): Record<string, unknown> {
  if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
  return b;
}

/**
 * The schema of a workspace-level route (members, API keys): session only, `?workspace_id=`
 * (WorkspaceIdQuery); `response` gets the workspace routes' error statuses. The access check is the route's
 * requireManage (preValidation), the validation its TypeBox schemas.
 */
export function workspaceRoute<S extends { summary: string; response: Record<number, unknown> }>(schema: S) {
  return {
    tags: ['management'],
    security: sessionSecurity,
    querystring: WorkspaceIdQuery,
    ...schema,
    response: { ...schema.response, ...memberErrors },
  };
}
