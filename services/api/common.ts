// Small pieces every management route module uses: security, path ids, timestamps, unique violations,
// the workspace query, the error statuses of workspace-level routes and response-schema helpers.
import { Type } from '@sinclair/typebox';
import type { ObjectOptions, SchemaOptions, Static, TProperties, TSchema } from '@sinclair/typebox';
import { HttpError, errorResponses, noValidation } from '../../shared/http/server.ts';
import { isPlainObject } from '../../shared/json.ts';

export const managementSecurity: Record<string, string[]>[] = [{ session: [] }, { apiKey: [] }];

/** A path id: a positive decimal integer, else NaN (which the access checks answer with 404). */
export function pathId(v: unknown): number {
  return typeof v === 'string' && /^[1-9][0-9]{0,15}$/.test(v) ? Number(v) : Number.NaN;
}

export const iso = (d: Date | string | null): string | null =>
  d === null ? null : (d instanceof Date ? d : new Date(d)).toISOString();

/** Postgres unique violation (optionally on a given constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint_name === constraint);
}

export const memberErrors = errorResponses(400, 401, 403, 404, 409);

export const workspaceQuery = {
  type: 'object',
  properties: {
    workspace_id: {
      type: 'integer',
      description: 'Workspace to act on; default: the first workspace where the caller is owner, then admin.',
    },
  },
} as const;

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
export const sessionSecurity: Record<string, string[]>[] = [{ session: [] }];

/** The body as a JSON object, else 400 (for routes whose body is required). */
export function bodyObject(b: unknown): Record<string, unknown> {
  if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
  return b;
}

/**
 * Options of a workspace-level route (members, API keys): session only, `?workspace_id=`, validated by
 * hand (exact messages); `response` gets the workspace routes' error statuses.
 */
export function workspaceRoute<S extends { summary: string; response: Record<number, unknown> }>(schema: S) {
  return {
    validatorCompiler: noValidation,
    schema: {
      tags: ['management'],
      security: sessionSecurity,
      querystring: workspaceQuery,
      ...schema,
      response: { ...schema.response, ...memberErrors },
    },
  };
}
