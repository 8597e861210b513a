// The breakdown's SQL: one program's rows for one dimension and a range of days (the whole weeks from
// program_weekly_breakdown, the days around them from program_daily_breakdown), summed per key, the top
// `limit` by clicks (then key, byte order), and how many keys there are: two index range scans,
// O((weeks + days at the ends) x keys), never the events.
import type { Sql } from '../../../../shared/db/sql.ts';
import { DIMENSIONS } from '../../../../shared/rollups/rules.ts';
import type { Dimension } from '../../../../shared/rollups/rules.ts';

export interface BreakdownRow {
  key: string;
  clicks: string;
  leads: string;
  conversions: string;
  revenue_cents: string;
  commission_cents: string;
  keys: string;
}

// The days first..last as whole weeks (program_weekly_breakdown, $5..$6: the Mondays of the first and last
// of them) and the days before and after them (program_daily_breakdown: $3..$7 and $8..$4, two branches:
// as one condition with an OR, Postgres scanned every day of the dimension and filtered); without a whole
// week inside the range, $5 is after $6 and every day comes from the daily rows.
const TOP_KEYS = `
  select key, sum(clicks)::text as clicks, sum(leads)::text as leads, sum(conversions)::text as conversions,
         sum(revenue_cents)::text as revenue_cents, sum(commission_cents)::text as commission_cents,
         (count(*) over ())::text as keys
  from (
    select key, clicks, leads, conversions, revenue_cents, commission_cents
    from program_weekly_breakdown
    where program_id = $1 and dimension = $2 and week between $5::text::date and $6::text::date
    union all
    select key, clicks, leads, conversions, revenue_cents, commission_cents
    from program_daily_breakdown
    where program_id = $1 and dimension = $2 and day between $3::text::date and $7::text::date
    union all
    select key, clicks, leads, conversions, revenue_cents, commission_cents
    from program_daily_breakdown
    where program_id = $1 and dimension = $2 and day between $8::text::date and $4::text::date
  ) rows
  group by key
  order by sum(clicks) desc, key collate "C"
  limit $9`;

const DAY_MS = 86_400_000;
const dayOf = (s: string) => Date.parse(`${s}T00:00:00Z`);
const text = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * first..last (YYYY-MM-DD) as the Mondays of the whole weeks inside it (firstWeek..lastWeek) and the days
 * outside them: first..headEnd and tailStart..last (empty ranges where there are none).
 */
export function splitWeeks(first: string, last: string) {
  const a = dayOf(first);
  const b = dayOf(last);
  const isoDow = (ms: number) => ((new Date(ms).getUTCDay() + 6) % 7) + 1;
  const firstWeek = isoDow(a) === 1 ? a : a + (8 - isoDow(a)) * DAY_MS;
  const lastWeek = isoDow(b) === 7 ? b - 6 * DAY_MS : b - (isoDow(b) + 6) * DAY_MS;
  // No whole week: no weekly rows (an empty range of Mondays), every day from the daily rows.
  if (firstWeek > lastWeek)
    return { firstWeek: '9999-12-27', lastWeek: '0001-01-01', headEnd: last, tailStart: text(b + DAY_MS) };
  return {
    firstWeek: text(firstWeek),
    lastWeek: text(lastWeek),
    headEnd: text(firstWeek - DAY_MS),
    tailStart: text(lastWeek + 7 * DAY_MS),
  };
}

/** $1..$9 of TOP_KEYS as SQL literals; throws on a value of another shape (never reached from the API). */
function literals(
  programId: number,
  dimension: Dimension,
  first: string,
  last: string,
  w: ReturnType<typeof splitWeeks>,
  limit: number,
): string[] {
  const day = (d: string) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) throw new Error(`not a day: ${d}`);
    return `'${d}'`;
  };
  if (!Number.isSafeInteger(programId) || !Number.isSafeInteger(limit)) throw new Error('not an integer');
  if (!(DIMENSIONS as readonly string[]).includes(dimension))
    throw new Error(`not a dimension: ${dimension}`);
  return [
    String(programId),
    `'${dimension}'`,
    day(first),
    day(last),
    day(w.firstWeek),
    day(w.lastWeek),
    day(w.headEnd),
    day(w.tailStart),
    String(limit),
  ];
}

export function createAnalyticsDal(sql: Sql) {
  return {
    async programCreatedAt(programId: number): Promise<Date> {
      const [pr] = await sql<{ created_at: Date }[]>`select created_at from programs where id = ${programId}`;
      return pr!.created_at;
    },

    /**
     * The top keys of the dimension over days first..last (YYYY-MM-DD), each with the count of all keys.
     * One simple-protocol round trip: `set local` (parallel workers off for this statement only, in the
     * implicit transaction of the string) and the query, with its values as literals (each checked
     * against its exact shape first, `literals`), so Postgres plans it with them. Measured at 10M events
     * (bench:dashboard, the referrer read: 98 keys over 90 days): as a prepared statement Postgres switched
     * after five runs to a generic plan that guessed ten rows and read the days in index order (17 ms); with
     * its values, the 1,764 rows of weeks and edge days looked big enough for two parallel workers, whose
     * start costs more than the read itself (15 ms; 3.6 ms without them).
     */
    async topKeys(programId: number, dimension: Dimension, first: string, last: string, limit: number) {
      const w = splitWeeks(first, last);
      const text = TOP_KEYS.replace(
        /\$(\d)/g,
        (_, n: string) => literals(programId, dimension, first, last, w, limit)[Number(n) - 1]!,
      );
      const results = (await sql.unsafe(
        `set local max_parallel_workers_per_gather = 0;\n${text}`,
      )) as unknown as BreakdownRow[][];
      return results[results.length - 1]!;
    },

    /** Names of the given partners (ids as text). */
    partnerNames(ids: string[]) {
      return sql<{ id: string; name: string }[]>`
        select id::text as id, name from partners where id = any(${ids}::bigint[])`;
    },

    /** short_link of the given links of the program (ids as text). */
    linkNames(programId: number, ids: string[]) {
      return sql<{ id: string; name: string }[]>`
        select id::text as id, short_link as name from referral_links
        where program_id = ${programId} and id = any(${ids}::bigint[])`;
    },
  };
}
