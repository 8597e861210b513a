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

export function parseName(v: unknown): string {
  if (v === undefined || v === null) throw new HttpError(400, 'name is required');
  const name = typeof v === 'string' ? v.trim() : '';
  if (name.length < 1 || name.length > 200) {
    throw new HttpError(400, 'name must be a string of 1 to 200 characters');
  }
  return name;
}

export function parseScopes(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== 'string')) {
    throw new HttpError(400, 'scopes must be a non-empty array of strings');
  }
  for (const s of v as string[]) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new HttpError(400, `Unknown scope: ${s}. Allowed: ${SCOPES.join(', ')}`);
    }
  }
  return [...new Set(v as string[])];
}

/** program_scope's ids, deduplicated; null = every program (whether they exist: checkProgramsFound). */
export function parseProgramIds(v: unknown): number[] | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length === 0) {
    throw new HttpError(400, 'program_scope must be null or a non-empty array of program ids');
  }
  const ids: number[] = [];
  for (const x of v as unknown[]) {
    const id = parseId(x);
    if (id === null)
      throw new HttpError(400, `program_scope has an invalid program id: ${JSON.stringify(x)}`);
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** 400 unless every id is a live program of the workspace (`found`). */
export function checkProgramsFound(ids: number[], found: ReadonlySet<number>): void {
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new HttpError(400, `program_scope: program ${missing.join(', ')} not found in this workspace`);
  }
}

export function parseExpiresAt(v: unknown, nowMs: number): Date | null {
  if (v === undefined || v === null) return null;
  const ms = typeof v === 'string' && ISO_DATETIME.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) {
    throw new HttpError(400, 'expires_at must be an ISO 8601 datetime with a time zone, or null');
  }
  if (ms <= nowMs) throw new HttpError(400, 'expires_at must be in the future');
  return new Date(ms);
}
