// What the rollups count and under which keys, pure: the UTC day of a row (program_daily_stats), and the
// dimensional daily rollup's (program_daily_breakdown, 0014_rollups.sql) dimensions and keys, per program,
// UTC day, dimension and key, with the counters of program_daily_stats. Written by RollupBuffer.flush
// (dal.ts) in the transaction of the events it counts, from the same deltas, so both rollups agree and a
// redelivery changes neither. What a key is, and how a program with a million distinct pages is bounded:
// docs/pipeline.md "Rollups by partner, link, country, device, referrer and page".
//
// Every key rule exists twice, once in TypeScript (the workers) and once in SQL (the rebuild and the check,
// rebuild.ts and raw.ts), side by side below; the check compares the workers' rows with the SQL over
// the raw events, so the two cannot drift apart unnoticed.

/** The UTC calendar day of an event (YYYY-MM-DD): the day of the rollup rows it counts in. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export const DIMENSIONS = [
  'partner',
  'link',
  'country',
  'device',
  'browser',
  'os',
  'referrer',
  'landing_page',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** The dimensions whose keys come from what visitors send (as opposed to the program's own records). */
export const VISIT_DIMENSIONS = ['country', 'device', 'browser', 'os', 'referrer', 'landing_page'] as const;
export type VisitDimension = (typeof VISIT_DIMENSIONS)[number];

/** A missing value: a click without a referrer, an address GeoIP does not know, a lead without a click. */
export const UNKNOWN_KEY = 'unknown';
/** What went past KEYS_PER_DAY distinct keys of a visit dimension on one program's day. */
export const OTHER_KEY = 'other';
/**
 * Distinct keys (besides `unknown` and `other`) a visit dimension may create per program and UTC day; the
 * first ones seen that day get their own row, the rest count under `other`. Partner and link keys are
 * bounded by the program's own records and not capped.
 */
export const KEYS_PER_DAY = 250;
/** Longest key, in characters (a landing page can be a 2,048-character URL); longer values are cut. */
export const MAX_KEY_CHARS = 300;

/** The keys an event counts under, by dimension; a dimension left out is not counted. */
export type DimensionKeys = Partial<Record<Dimension, string>>;
export type VisitKeys = Record<VisitDimension, string>;

/** Cut to MAX_KEY_CHARS characters (code points, as Postgres's left() counts them). */
function cut(s: string): string {
  if (s.length <= MAX_KEY_CHARS) return s;
  const chars = Array.from(s);
  return chars.length <= MAX_KEY_CHARS ? s : chars.slice(0, MAX_KEY_CHARS).join('');
}

/** ASCII-only lower case: Postgres's lower() depends on the database's locale, translate() does not. */
const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/** A stored value as a key: empty or missing is `unknown`. */
export function textKey(v: string | null | undefined): string {
  return v === null || v === undefined || v === '' ? UNKNOWN_KEY : cut(v);
}

// scheme://[userinfo@]host: the host is a bracketed IPv6 literal or runs to the first : / ? or #.
const HOST_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/;

/** The host of a referrer URL, lower case (ASCII); `unknown` without one (no referrer, not a URL). */
export function referrerKey(url: string | null | undefined): string {
  if (url === null || url === undefined) return UNKNOWN_KEY;
  const host = HOST_RE.exec(url)?.[1];
  return textKey(host === undefined ? null : lowerAscii(host));
}

/** A landing page: page_url up to its first ? or # (no query, no fragment); `unknown` without one. */
export function landingPageKey(url: string | null | undefined): string {
  if (url === null || url === undefined) return UNKNOWN_KEY;
  const end = url.search(/[?#]/);
  return textKey(end === -1 ? url : url.slice(0, end));
}

/** The visit keys of a click, from its stored (enriched) values. */
export function visitKeys(c: {
  geo_country: string | null;
  device_type: string | null;
  browser_name: string | null;
  device_os: string | null;
  referrer_url: string | null;
  page_url: string | null;
}): VisitKeys {
  return {
    country: textKey(c.geo_country),
    device: textKey(c.device_type),
    browser: textKey(c.browser_name),
    os: textKey(c.device_os),
    referrer: referrerKey(c.referrer_url),
    landing_page: landingPageKey(c.page_url),
  };
}

/** The customer columns that remember its attributing click's visit keys (0014_rollups.sql). */
export const ATTR_COLUMNS = {
  country: 'attr_country',
  device: 'attr_device',
  browser: 'attr_browser',
  os: 'attr_os',
  referrer: 'attr_referrer',
  landing_page: 'attr_landing_page',
} as const satisfies Record<VisitDimension, string>;

/** What a customer row holds of its attribution (select CUSTOMER_KEY_COLUMNS). */
export interface CustomerKeyRow {
  partner_id: string | null;
  link_id: string | null;
  attr_country: string | null;
  attr_device: string | null;
  attr_browser: string | null;
  attr_os: string | null;
  attr_referrer: string | null;
  attr_landing_page: string | null;
}
export const CUSTOMER_KEY_COLUMNS =
  'partner_id, link_id, attr_country, attr_device, attr_browser, attr_os, attr_referrer, attr_landing_page';

/** The keys a customer's lead, conversion, sale and commission count under. */
export function customerKeys(r: CustomerKeyRow): DimensionKeys {
  return {
    partner: r.partner_id ?? UNKNOWN_KEY,
    link: r.link_id ?? UNKNOWN_KEY,
    country: r.attr_country ?? UNKNOWN_KEY,
    device: r.attr_device ?? UNKNOWN_KEY,
    browser: r.attr_browser ?? UNKNOWN_KEY,
    os: r.attr_os ?? UNKNOWN_KEY,
    referrer: r.attr_referrer ?? UNKNOWN_KEY,
    landing_page: r.attr_landing_page ?? UNKNOWN_KEY,
  };
}

/** The keys of a customer without a click (a lead without one, spec rule 6): `unknown` everywhere. */
export const UNATTRIBUTED_KEYS: DimensionKeys = Object.freeze(
  Object.fromEntries(DIMENSIONS.map((d) => [d, UNKNOWN_KEY])),
);

/** The same rules in SQL, over an expression of the raw column: for the rebuild and the check. */
export const KEY_SQL = {
  text: (e: string) => `coalesce(left(nullif(${e}, ''), ${MAX_KEY_CHARS}), '${UNKNOWN_KEY}')`,
  referrer: (e: string) =>
    KEY_SQL.text(
      `translate(substring(${e} from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]*\\]|[^:/?#]*)'), ` +
        `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`,
    ),
  landingPage: (e: string) => KEY_SQL.text(`substring(${e} from '^[^?#]*')`),
};

/** Each visit dimension's key in SQL, given the alias of a click_events row. */
export function visitKeySql(alias: string): Record<VisitDimension, string> {
  return {
    country: KEY_SQL.text(`${alias}.geo_country`),
    device: KEY_SQL.text(`${alias}.device_type`),
    browser: KEY_SQL.text(`${alias}.browser_name`),
    os: KEY_SQL.text(`${alias}.device_os`),
    referrer: KEY_SQL.referrer(`${alias}.referrer_url`),
    landing_page: KEY_SQL.landingPage(`${alias}.page_url`),
  };
}

// ---------------------------------------------------------------------------------------------------
// The counters

export interface BreakdownDelta {
  clicks: number;
  leads: number;
  conversions: number;
  sales: number;
  revenue_cents: number;
  commission_cents: number;
}
/** The counters every rollup row holds (program_daily_stats and the breakdown tables alike). */
export const FIELDS = [
  'clicks',
  'leads',
  'conversions',
  'sales',
  'revenue_cents',
  'commission_cents',
] as const;

/** Every counter at 0: a row before its first delta. */
export function zeroCounters(): Record<(typeof FIELDS)[number], number> {
  return { clicks: 0, leads: 0, conversions: 0, sales: 0, revenue_cents: 0, commission_cents: 0 };
}

/**
 * The `do update set` list of a rollup upsert: each counter of the stored row plus the new row's. One text
 * for the three rollup tables, so no counter can be left out of one of them.
 */
export function addCounters(
  table: 'program_daily_stats' | 'program_daily_breakdown' | 'program_weekly_breakdown',
): string {
  return FIELDS.map((f) => `${f} = ${table}.${f} + excluded.${f}`).join(', ');
}
