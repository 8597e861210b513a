// SQL of the risk view: the program's held commissions by reason and partner, its filtered clicks by quality
// (all time, and by UTC day for the chart), both from small partial indexes (commissions_review,
// click_events_filtered).
import type { Sql } from '../../../../shared/db/sql.ts';

export interface HeldRow {
  reason: string;
  partner_id: string;
  partner_name: string;
  commissions: number;
  amount_cents: string;
}

/** Held and undecided (the commissions API's `?status=review`), grouped by reason and partner. */
export function heldByReasonAndPartner(sql: Sql, programId: number) {
  return sql<HeldRow[]>`
    select c.review_reason as reason, c.partner_id::text, p.name as partner_name, count(*)::int as commissions,
           sum(c.amount_cents - c.deducted_cents)::text as amount_cents
    from commissions c join partners p on p.id = c.partner_id
    where c.program_id = ${programId} and c.review_reason is not null
      and c.status in ('pending', 'refunded') and c.paid_at is null
    group by 1, 2, 3
    order by 1, sum(c.amount_cents - c.deducted_cents) desc, 2`;
}

/** The program's non-test bot and prefetch clicks by quality, all time. */
export function filteredByQuality(sql: Sql, programId: number) {
  return sql<{ quality: string; clicks: string }[]>`
    select quality, count(*)::text as clicks from click_events
    where program_id = ${programId} and quality <> 'human' and not is_test
    group by 1`;
}

/** The same from `sinceIso` on, by UTC day. */
export function filteredByDay(sql: Sql, programId: number, sinceIso: string) {
  return sql<{ date: string; quality: string; clicks: string }[]>`
    select (click_timestamp at time zone 'UTC')::date::text as date, quality, count(*)::text as clicks
    from click_events
    where program_id = ${programId} and quality <> 'human' and not is_test
      and click_timestamp >= ${sinceIso}::text::timestamptz
    group by 1, 2 order by 1, 2`;
}
