// The breakdown's SQL: one program's rows of program_daily_breakdown for one dimension and a range of days,
// summed per key, the top `limit` by clicks (then key, byte order), and how many keys there are: an index
// range scan of (program_id, dimension, day), O(days x keys), never the events.
import type { Sql } from '../../../../shared/db/sql.ts';
import type { Dimension } from '../../../../shared/pipeline/breakdown.ts';

export interface BreakdownRow {
  key: string;
  clicks: string;
  leads: string;
  conversions: string;
  revenue_cents: string;
  commission_cents: string;
  keys: string;
}

export function createAnalyticsDal(sql: Sql) {
  return {
    async programCreatedAt(programId: number): Promise<Date> {
      const [pr] = await sql<{ created_at: Date }[]>`select created_at from programs where id = ${programId}`;
      return pr!.created_at;
    },

    /** The top keys of the dimension over days first..last (YYYY-MM-DD), each with the count of all keys. */
    topKeys(programId: number, dimension: Dimension, first: string, last: string, limit: number) {
      return sql<BreakdownRow[]>`
        select key, sum(clicks)::text as clicks, sum(leads)::text as leads, sum(conversions)::text as conversions,
               sum(revenue_cents)::text as revenue_cents, sum(commission_cents)::text as commission_cents,
               (count(*) over ())::text as keys
        from program_daily_breakdown
        where program_id = ${programId} and dimension = ${dimension}
          and day between ${first}::text::date and ${last}::text::date
        group by key
        order by sum(clicks) desc, key collate "C"
        limit ${limit}`;
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
