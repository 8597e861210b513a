// SQL of the public program page: a program is public when its advertiser turned public_page on and it is
// live (and not deleted).
import type { Sql } from '../../../../shared/db/sql.ts';

export interface PublicProgramRow {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  description: string | null;
  currency: string;
  cookie_window_days: number;
  commission: unknown;
  auto_approve: boolean;
  hold_days: number | null;
  min_payout_cents: string | null;
}

/** The public, live program with this slug. Payout terms through to_jsonb (the payouts module's columns). */
export async function publicProgram(sql: Sql, slug: string) {
  const [row] = await sql<PublicProgramRow[]>`
    select id, workspace_id, name, slug, description, currency, cookie_window_days, commission, auto_approve,
           (to_jsonb(pr) ->> 'hold_days')::int as hold_days, (to_jsonb(pr) ->> 'min_payout_cents') as min_payout_cents
    from programs pr
    where slug = ${slug} and public_page and status = 'live' and deleted_at is null`;
  return row;
}
