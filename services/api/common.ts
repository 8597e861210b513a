// Small pieces every management route module uses: security, path ids, timestamps, unique violations,
// the workspace query and the error statuses of workspace-level routes.
import { errorResponses } from '../../shared/http/server.ts';

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
