// The rules of management API keys (spec 2 and 4.8, CONTRACT "Management API keys"): the input checks
// (each 400 with its own message) and the answer's shape. The full key is returned once, by POST; every
// other answer carries `key_masked` (`affk_AbCd…wxyz`) and `prefix` (the first 9 characters) instead.
import { HttpError } from '../../../../shared/http/server.ts';
import { iso, parseId } from '../../common.ts';
import { SCOPES } from '../auth/service.ts';
import type { KeyRow } from './dal.ts';

/** `affk_` plus 4 characters. */
export const PREFIX_LENGTH = 9;
export const KEY_NOT_FOUND = 'API key not found';
export const KEY_REVOKED = 'API key is revoked';
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export const toKey = (r: KeyRow) => ({
  id: Number(r.id),
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  program_scope: r.program_scope,
  status: r.status,
  expires_at: iso(r.expires_at),
  created_at: r.created_at.toISOString(),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at),
  key_masked: r.key_masked,
});

// Each input rule is a function that answers the message (or null): the route schemas check with it
// (Checked), and the parse functions below throw it as a 400 and return the normalised value.

const fail = (message: string | null): void => {
  if (message !== null) throw new HttpError(400, message);
};

export function nameError(v: unknown): string | null {
  if (v === undefined || v === null) return 'name is required';
  const name = typeof v === 'string' ? v.trim() : '';
  return name.length < 1 || name.length > 200 ? 'name must be a string of 1 to 200 characters' : null;
}

export function parseName(v: unknown): string {
  fail(nameError(v));
  return (v as string).trim();
}

export function scopesError(v: unknown): string | null {
  if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== 'string')) {
    return 'scopes must be a non-empty array of strings';
  }
  for (const s of v as string[]) {
    if (!(SCOPES as readonly string[]).includes(s))
      return `Unknown scope: ${s}. Allowed: ${SCOPES.join(', ')}`;
  }
  return null;
}

export function parseScopes(v: unknown): string[] {
  fail(scopesError(v));
  return [...new Set(v as string[])];
}

export function programIdsError(v: unknown): string | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length === 0) {
    return 'program_scope must be null or a non-empty array of program ids';
  }
  for (const x of v as unknown[]) {
    if (parseId(x) === null) return `program_scope has an invalid program id: ${JSON.stringify(x)}`;
  }
  return null;
}

/** program_scope's ids, deduplicated; null = every program (whether they exist: checkProgramsFound). */
export function parseProgramIds(v: unknown): number[] | null {
  fail(programIdsError(v));
  if (v === null) return null;
  const ids: number[] = [];
  for (const x of v as unknown[]) {
    const id = parseId(x)!;
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * The body of a key update, before its fields: expires_at never changes, and something must. A
 * preValidation step (these come before the fields' own checks).
 */
export function checkKeyUpdate(b: Record<string, unknown>): void {
  if (b.expires_at !== undefined) {
    throw new HttpError(400, 'expires_at cannot be changed; create a new key instead');
  }
  if (b.name === undefined && b.scopes === undefined && b.program_scope === undefined) {
    throw new HttpError(400, 'Nothing to update: send name, scopes or program_scope');
  }
}

/** 400 unless every id is a live program of the workspace (`found`). */
export function checkProgramsFound(ids: number[], found: ReadonlySet<number>): void {
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new HttpError(400, `program_scope: program ${missing.join(', ')} not found in this workspace`);
  }
}

const expiresAtMs = (v: unknown): number =>
  typeof v === 'string' && ISO_DATETIME.test(v) ? Date.parse(v) : NaN;

export function expiresAtError(v: unknown, nowMs: number): string | null {
  if (v === undefined || v === null) return null;
  const ms = expiresAtMs(v);
  if (Number.isNaN(ms)) return 'expires_at must be an ISO 8601 datetime with a time zone, or null';
  return ms <= nowMs ? 'expires_at must be in the future' : null;
}

export function parseExpiresAt(v: unknown, nowMs: number): Date | null {
  fail(expiresAtError(v, nowMs));
  return v === undefined || v === null ? null : new Date(expiresAtMs(v));
}
