// The rules the dashboard reads share, pure: the query string (a parameter given twice is 400), the exact
// 400 messages of its parameters, the event kinds. Each read model has its own file: events.ts (the paged
// events), performance.ts (the daily series, totals and trends), status.ts (the integration checklist). The
// SQL is in dal.ts; routes.ts only wires them together.
import { HttpError } from '../../../../shared/http/server.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { parseId } from '../../common.ts';
import type { Counts, Kind } from './dal.ts';

export const MAX_PAGE_SIZE = 100;
export const MAX_CUSTOM_DAYS = 3660;

export const KINDS: readonly Kind[] = ['click', 'lead', 'conversion'];
export const zero = (): Counts => ({ click: 0, lead: 0, conversion: 0 });

/** The query string as an object; a parameter given twice is 400. */
export function queryOf(req: { query: unknown }): Record<string, unknown> {
  const q = isPlainObject(req.query) ? req.query : {};
  for (const [k, v] of Object.entries(q)) {
    if (Array.isArray(v)) throw new HttpError(400, `${k} must be given once`);
  }
  return q;
}

export const PAGE_ERROR = 'page must be an integer of at least 1';
export const PAGE_SIZE_ERROR = `pageSize must be an integer between 1 and ${MAX_PAGE_SIZE}`;
export const EVENT_TYPE_ERROR = 'eventType must be one of click, lead, conversion (or all)';
export const PERIOD_ERROR = 'period must be one of 7d, 30d, 90d, all';
export const PARTNER_ID_ERROR = 'partnerId must be a positive integer';
export const LINK_ID_ERROR = 'linkId must be a positive integer';

/**
 * A positive integer query parameter up to `max` (its decimal text, or the number the schema validator
 * made of plain digits), else `message`; absent is fine (the default).
 */
export const positiveError =
  (max: number, message: string) =>
  (v: unknown): string | null => {
    if (v === undefined) return null;
    const n = parseId(v);
    return n === null || n > max ? message : null;
  };

/** A positive integer query parameter up to `max`, `dflt` when absent; 400 with `message` otherwise. */
export function positiveParam(
  q: Record<string, unknown>,
  name: string,
  dflt: number,
  max: number,
  message: string,
) {
  const v = q[name];
  if (v === undefined) return dflt;
  const error = positiveError(max, message)(v);
  if (error !== null) throw new HttpError(400, error);
  return parseId(v)!;
}
