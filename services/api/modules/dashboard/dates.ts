// Dates of the dashboard reads: ISO 8601 query values and UTC day arithmetic. Instants are epoch
// microseconds (PostgreSQL's resolution) as plain numbers: the accepted years (1900-2199) stay far inside
// Number's exact integer range. Days are day numbers (days since 1970-01-01, UTC).
//
// A date-only dateFrom means the start of that UTC day, a date-only dateTo its end (the whole day is
// included); no offset means UTC. Both bounds are inclusive; an empty range (dateFrom after dateTo) is 400.
import { HttpError } from '../../../../shared/http/server.ts';
import { utcDay } from '../../../../shared/rollups/rules.ts';

export const DAY_MS = 86_400_000;
export const DAY_US = DAY_MS * 1000;

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+ -])(\d{2})(?::?(\d{2}))?)?)?$/;

export interface ParsedDate {
  /** Epoch microseconds, rounded down (the instant's microsecond). */
  us: number;
  /** Digits beyond microseconds were cut: the instant is after `us` (matters for a lower bound). */
  cut: boolean;
  dateOnly: boolean;
}

/** An ISO 8601 date or date-time (no offset = UTC), or null when it is not one. */
export function parseIsoDate(s: string): ParsedDate | null {
  const m = ISO_RE.exec(s);
  if (!m) return null;
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, oh, om] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  if (y < 1900 || y > 2199 || mo < 1 || mo > 12 || d < 1) return null;
  if (d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const h = Number(hs ?? 0);
  const mi = Number(mis ?? 0);
  const sec = Number(ss ?? 0);
  if (h > 23 || mi > 59 || sec > 59) return null;
  // A space where the offset sign goes is a "+" that a query string decoded; "-" and "+" are themselves.
  if (sign === ' ' && (z !== undefined || hs === undefined)) return null;
  let offsetMin = 0;
  if (sign !== undefined) {
    const ohn = Number(oh);
    const omn = Number(om ?? 0);
    if (ohn > 23 || omn > 59) return null;
    offsetMin = (sign === '-' ? -1 : 1) * (ohn * 60 + omn);
  }
  const digits = (frac ?? '').padEnd(9, '0');
  const micros = Number(digits.slice(0, 6));
  const cut = Number(digits.slice(6)) > 0;
  const ms = Date.UTC(y, mo - 1, d, h, mi, sec) - offsetMin * 60_000;
  return { us: ms * 1000 + micros, cut, dateOnly: hs === undefined };
}

/** A half-open instant range [lo, hi) in epoch microseconds; null = unbounded. */
export interface Range {
  lo: number | null;
  hi: number | null;
}

const dateMessage = (name: 'dateFrom' | 'dateTo') =>
  `${name} must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)`;

/**
 * ISO_RE with the ranges a regular expression can state (years 1900-2199, months, days 01-31, hours,
 * minutes, seconds, offsets): the `pattern` of dateFrom/dateTo in the OpenAPI. A day past its month's end
 * matches it and is still refused by parseIsoDate.
 */
export const DATE_PATTERN =
  '^(?:19|20|21)[0-9]{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])' +
  '(?:[Tt ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:[.,][0-9]{1,9})?)?' +
  '(?:[Zz]|[+ -](?:[01][0-9]|2[0-3])(?::?[0-5][0-9])?)?)?$';

/** The message when a dateFrom/dateTo value is not a date parseRange takes, else null (for the schemas). */
export const dateError =
  (name: 'dateFrom' | 'dateTo') =>
  (v: unknown): string | null =>
    v === undefined || (typeof v === 'string' && parseIsoDate(v)) ? null : dateMessage(name);

/** dateFrom/dateTo query values → an inclusive range as [lo, hi); 400 when malformed or empty. */
export function parseRange(query: Record<string, unknown>): Range {
  const one = (name: 'dateFrom' | 'dateTo'): ParsedDate | null => {
    const v = query[name];
    if (v === undefined) return null;
    const p = typeof v === 'string' ? parseIsoDate(v) : null;
    if (!p) throw new HttpError(400, dateMessage(name));
    return p;
  };
  const from = one('dateFrom');
  const to = one('dateTo');
  const lo = from === null ? null : from.us + (from.cut ? 1 : 0);
  // Inclusive upper bound: a date-only dateTo includes its whole day; a date-time includes its microsecond.
  const hi = to === null ? null : to.dateOnly ? to.us + DAY_US : to.us + 1;
  if (lo !== null && hi !== null && lo >= hi) throw new HttpError(400, 'dateFrom must not be after dateTo');
  return { lo, hi };
}

/** Epoch microseconds → ISO 8601 with microseconds, for SQL parameters. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/** UTC day number of an instant in microseconds / milliseconds. */
export const dayOfUs = (us: number): number => Math.floor(us / DAY_US);
export const dayOfMs = (ms: number): number => Math.floor(ms / DAY_MS);
/** Day number ↔ `YYYY-MM-DD`. */
export const dayString = (day: number): string => utcDay(day * DAY_MS);
export const dayNumber = (s: string): number => Date.parse(`${s}T00:00:00Z`) / DAY_MS;
/** The first instant and the last millisecond of a day, ISO 8601. */
export const dayStartIso = (day: number): string => new Date(day * DAY_MS).toISOString();
export const dayEndIso = (day: number): string => new Date((day + 1) * DAY_MS - 1).toISOString();
