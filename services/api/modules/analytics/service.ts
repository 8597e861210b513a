// GET /api/tracking/breakdown/:programId (CONTRACT "Analytics: who and where"): the rules. The days come
// from the performance rules (period, or dateFrom and dateTo; dashboard/performance.ts), the counters from the
// dimensional rollup (dal.ts), the labels from the program's records or from the key itself.
import type { Sql } from '../../../../shared/db/sql.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { DIMENSIONS, KEYS_PER_DAY, OTHER_KEY, UNKNOWN_KEY } from '../../../../shared/rollups/rules.ts';
import type { Dimension } from '../../../../shared/rollups/rules.ts';
import { parseId } from '../../common.ts';
import { dayEndIso, dayOfMs, dayStartIso, dayString } from '../dashboard/dates.ts';
import { parsePerformanceQuery, performanceDays } from '../dashboard/performance.ts';
import { createAnalyticsDal } from './dal.ts';
import type { BreakdownRow } from './dal.ts';

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 10;
export const DIMENSION_ERROR = `dimension must be one of ${DIMENSIONS.join(', ')}`;
export const LIMIT_ERROR = `limit must be an integer between 1 and ${MAX_LIMIT}`;

export function dimensionError(v: unknown): string | null {
  return (DIMENSIONS as readonly unknown[]).includes(v) ? null : DIMENSION_ERROR;
}

const countryNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** What a key is called, for the keys that are not a record of the program (partner, link). */
export function keyLabel(dimension: Dimension, key: string): string {
  if (key === OTHER_KEY && dimension !== 'partner' && dimension !== 'link')
    return `Other (past ${KEYS_PER_DAY} a day)`;
  if (key === UNKNOWN_KEY) {
    if (dimension === 'referrer') return 'Direct or unknown';
    if (dimension === 'partner') return 'No partner';
    if (dimension === 'link') return 'No link';
    return 'Unknown';
  }
  switch (dimension) {
    case 'country':
      try {
        return /^[A-Za-z]{2}$/.test(key) ? (countryNames.of(key.toUpperCase()) ?? key) : key;
      } catch {
        return key;
      }
    case 'device':
      return key === 'smarttv'
        ? 'Smart TV'
        : key === 'xr'
          ? 'XR headset'
          : key[0]!.toUpperCase() + key.slice(1);
    default:
      return key;
  }
}

export interface BreakdownItem {
  key: string;
  label: string;
  clicks: number;
  leads: number;
  conversions: number;
  revenue: number;
  commission: number;
}

function item(r: BreakdownRow, label: string): BreakdownItem {
  return {
    key: r.key,
    label,
    clicks: Number(r.clicks),
    leads: Number(r.leads),
    conversions: Number(r.conversions),
    revenue: Number(r.revenue_cents) / 100,
    commission: Number(r.commission_cents) / 100,
  };
}

/** The validated query: dimension, the days (performance rules), limit. */
export function parseBreakdownQuery(q: Record<string, unknown>) {
  const dimension = q.dimension;
  if (dimensionError(dimension) !== null) throw new HttpError(400, DIMENSION_ERROR);
  const limit = q.limit === undefined ? DEFAULT_LIMIT : parseId(q.limit);
  if (limit === null || limit > MAX_LIMIT) throw new HttpError(400, LIMIT_ERROR);
  return { dimension: dimension as Dimension, limit, days: parsePerformanceQuery(q) };
}

/** The breakdown answer of a program. */
export async function readBreakdown(
  sql: Sql,
  programId: number,
  q: ReturnType<typeof parseBreakdownQuery>,
  nowMs: number = Date.now(),
) {
  const dal = createAnalyticsDal(sql);
  const { first, last } = await performanceDays(dal, programId, q.days, dayOfMs(nowMs));
  const rows = await dal.topKeys(programId, q.dimension, dayString(first), dayString(last), q.limit);
  const ids = rows.map((r) => r.key).filter((k) => /^[0-9]+$/.test(k));
  const names = new Map<string, string>();
  if (ids.length > 0 && q.dimension === 'partner')
    for (const p of await dal.partnerNames(ids)) names.set(p.id, p.name);
  if (ids.length > 0 && q.dimension === 'link')
    for (const l of await dal.linkNames(programId, ids)) names.set(l.id, l.name);
  const label = (key: string) =>
    names.get(key) ??
    (q.dimension === 'partner' && key !== UNKNOWN_KEY
      ? `Partner #${key}`
      : q.dimension === 'link' && key !== UNKNOWN_KEY
        ? `Link #${key}`
        : keyLabel(q.dimension, key));
  return {
    data: rows.map((r) => item(r, label(r.key))),
    meta: {
      dimension: q.dimension,
      period: q.days.period,
      dateFrom: dayStartIso(first),
      dateTo: dayEndIso(last),
      keys: rows.length === 0 ? 0 : Number(rows[0]!.keys),
    },
  };
}
