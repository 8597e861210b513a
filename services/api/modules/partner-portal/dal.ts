// SQL of the partner API. Every read starts from partner_claims: an account reaches a partner record only
// through a claim, and a program only through a partner-program of a claimed record (never by email).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { PricedRule } from '../../../../shared/domain/commission-policy.ts';
import type { TierMetric, TierWindow } from '../../../../shared/domain/tiers.ts';
import type { BonusMetric, BonusPeriod } from '../../../../shared/domain/bonuses.ts';

export interface PartnerProgramRow {
  pp_id: string;
  partner_id: string;
  status: 'pending' | 'approved' | 'rejected';
  rejection_reason: string | null;
  balance_cents: string;
  created_at: Date;
  program_id: string;
  name: string;
  slug: string;
  program_status: string;
  description: string | null;
  currency: string;
  cookie_window_days: number;
  commission: unknown;
  partner_links: boolean;
  hold_days: number | null;
  min_payout_cents: string | null;
  website_url: string | null;
  allowed_origins: string[];
  /** Rewards (docs/rewards.md): its group, its own policy, the next rule up from its group and its figure. */
  group_id: string;
  group_name: string;
  group_slug: string;
  group_commission: unknown;
  group_locked: boolean;
  commission_override: unknown;
  tier_metric: TierMetric | null;
  tier_window: TierWindow | null;
  tier_threshold: string | null;
  tier_value: string | null;
  tier_next_group_name: string | null;
}

/** A partner-program's unpaid money, by where it stands (MONEY_COLUMNS). */
export interface PartnerMoneyRow {
  pending_cents: string;
  held_cents: string;
  approved_cents: string;
  next_payable_at: Date | null;
}

const PP_COLUMNS = (sql: Sql) => sql`
  pp.id as pp_id, pp.partner_id, pp.status, pp.rejection_reason, pp.balance_cents, pp.created_at,
  pr.id as program_id, pr.name, pr.slug, pr.status as program_status, pr.description, pr.currency,
  pr.cookie_window_days, pr.commission, pr.partner_links,
  pr.hold_days, pr.min_payout_cents, pr.website_url, pr.allowed_origins,
  pp.group_id, g.name as group_name, g.slug as group_slug, g.commission as group_commission, pp.group_locked,
  pp.commission_override, t.metric as tier_metric, t.time_window as tier_window, t.threshold::text as tier_threshold,
  t.next_group_name as tier_next_group_name,
  (select (case t.metric when 'sales_cents' then m.sales_cents when 'customers' then m.customers
                         else m.commission_cents end)::text
   from partner_metrics m
   where m.partner_program_id = pp.id
     and m.period = case when t.time_window = 'lifetime' then date '1970-01-01'
                         else date_trunc('month', now() at time zone 'UTC')::date end) as tier_value`;

/** The partner's group, and the first rule of the ladder up from it (none: no rule from its group). */
const REWARDS_JOIN = (sql: Sql) => sql`
  join program_groups g on g.id = pp.group_id
  left join lateral (
    select r.metric, r.time_window, r.threshold, ng.name as next_group_name
    from tier_rules r join program_groups ng on ng.id = r.to_group_id
    where r.from_group_id = pp.group_id order by r.position, r.id limit 1
  ) t on true`;

/**
 * What the partner-program is owed and not yet paid, in one aggregate over its commissions (the partner's
 * commissions in the program). A commission is owed `amount_cents - deducted_cents`: a partial refund keeps
 * the row and records what it took back in deducted_cents (status `refunded`, the rest still payable, as
 * the payouts' candidates read it). Unpaid and in no payout, a commission is
 * - pending: status `pending`, or a partly refunded one still in its hold (payable_at in the future) or
 *   held for review; held (part of pending): review_reason set;
 * - approved (in the next payout): status `approved`, or a partly refunded one past its hold and not held.
 * next_payable_at: the earliest payable_at of the pending ones not held for review.
 */
const MONEY_COLUMNS = (sql: Sql) => sql`
  m.pending_cents, m.held_cents, m.approved_cents, m.next_payable_at`;
const MONEY_JOIN = (sql: Sql) => sql`
  cross join lateral (
    select coalesce(sum(cm.owed) filter (where cm.pending), 0)::text as pending_cents,
           coalesce(sum(cm.owed) filter (where cm.pending and cm.review_reason is not null), 0)::text
             as held_cents,
           coalesce(sum(cm.owed) filter (where not cm.pending), 0)::text as approved_cents,
           min(cm.payable_at) filter (where cm.pending and cm.review_reason is null) as next_payable_at
    from (
      select c.amount_cents - c.deducted_cents as owed, c.review_reason, c.payable_at,
             c.status = 'pending'
               or (c.status = 'refunded'
                   and (c.review_reason is not null or coalesce(c.payable_at, c.created_at) > now())) as pending
      from commissions c
      where c.partner_id = pp.partner_id and c.program_id = pp.program_id
        and c.payout_id is null and c.paid_at is null
        and (c.status in ('pending', 'approved')
             or (c.status = 'refunded' and c.amount_cents > c.deducted_cents))
    ) cm
  ) m`;

/** The partner-programs of every record the account claimed, in live programs, with their money. */
export function programsOfAccount(sql: Sql, accountId: number) {
  return sql<(PartnerProgramRow & PartnerMoneyRow)[]>`
    select ${PP_COLUMNS(sql)}, ${MONEY_COLUMNS(sql)}
    from partner_claims c
    join partner_programs pp on pp.partner_id = c.partner_id
    join programs pr on pr.id = pp.program_id and pr.deleted_at is null
    ${REWARDS_JOIN(sql)}
    ${MONEY_JOIN(sql)}
    where c.account_id = ${accountId}
    order by pp.created_at, pp.id`;
}

/** The account's partner-program in the program (the first, should two claimed records be in it). */
export async function partnerProgramOf(sql: Sql, accountId: number, programId: number) {
  const [row] = await sql<PartnerProgramRow[]>`
    select ${PP_COLUMNS(sql)}
    from partner_claims c
    join partner_programs pp on pp.partner_id = c.partner_id and pp.program_id = ${programId}
    join programs pr on pr.id = pp.program_id and pr.deleted_at is null
    ${REWARDS_JOIN(sql)}
    where c.account_id = ${accountId}
    order by pp.id limit 1`;
  return row;
}

export interface BonusProgressRow {
  pp_id: string;
  id: string;
  name: string;
  metric: BonusMetric;
  threshold: string;
  amount_cents: string;
  period: BonusPeriod;
  starts_at: Date;
  ends_at: Date;
  value: string;
  awarded: boolean;
}

/**
 * The running bonuses (started, not ended, not deleted) of the partner-programs' programs that their groups
 * take part in, with each one's progress in the current period (docs/rewards.md "Bonuses").
 */
export function bonusesInProgress(sql: Sql, ppIds: string[]) {
  return sql<BonusProgressRow[]>`
    select pp.id as pp_id, b.id, b.name, b.metric, b.threshold::text, b.amount_cents::text, b.period, b.starts_at,
           b.ends_at, coalesce(bp.value, 0)::text as value, coalesce(bp.awarded_at is not null, false) as awarded
    from partner_programs pp
    join bonuses b on b.program_id = pp.program_id and b.deleted_at is null and b.starts_at <= now()
      and b.ends_at > now() and (b.group_ids is null or pp.group_id = any(b.group_ids))
    left join bonus_progress bp on bp.bonus_id = b.id and bp.partner_program_id = pp.id
      and bp.period = case when b.period = 'once' then 'once' else to_char(now() at time zone 'UTC', 'YYYY-MM') end
    where pp.id = any(${ppIds}::bigint[])
    order by pp.id, b.id`;
}

/** The partner-program's links count (partners may create a bounded number). */
export async function linkCount(sql: Sql, ppId: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from referral_links where partner_program_id = ${ppId}`;
  return row!.n;
}

/** Whether the link is one of the partner's in the program. */
export async function ownsLink(sql: Sql, programId: number, partnerId: number, linkId: number) {
  const [row] = await sql<{ ok: boolean }[]>`
    select exists (select 1 from referral_links
                   where id = ${linkId} and program_id = ${programId} and partner_id = ${partnerId}) as ok`;
  return row!.ok;
}

export interface CommissionRow {
  id: string;
  program_id: string;
  status: string;
  amount_cents: string;
  deducted_cents: string;
  currency: string;
  sale_amount_cents: string | null;
  created_at: Date;
  payable_at: Date | null;
  payout_id: string | null;
  coupon_code: string | null;
  under_review: boolean;
  group_id: string | null;
  rule: PricedRule | null;
  bonus_id: string | null;
}

/** The commissions of the account's claimed records (in live programs), newest first, and their count. */
export async function commissionsOfAccount(
  sql: Sql,
  accountId: number,
  q: { programId: number | null; status: string | null; limit: number; offset: number },
) {
  const where = sql`
    from commissions cm
    join programs pr on pr.id = cm.program_id and pr.deleted_at is null
    left join sales s on s.id = cm.sale_id
    where cm.partner_id in (select partner_id from partner_claims where account_id = ${accountId})
      ${q.programId === null ? sql`` : sql`and cm.program_id = ${q.programId}`}
      ${q.status === null ? sql`` : sql`and cm.status = ${q.status}`}`;
  const [rows, [count]] = await Promise.all([
    sql<CommissionRow[]>`
      select cm.id, cm.program_id, cm.status, cm.amount_cents, cm.deducted_cents, cm.currency,
             s.amount_cents as sale_amount_cents, cm.created_at,
             cm.payable_at, cm.payout_id, cm.group_id, cm.rule, cm.bonus_id,
             case when s.partner_code_id is not null then s.coupon_code end as coupon_code,
             (cm.review_reason is not null and cm.status in ('pending', 'refunded') and cm.paid_at is null) as under_review
      ${where}
      order by cm.created_at desc, cm.id desc
      limit ${q.limit} offset ${q.offset}`,
    sql<{ n: string }[]>`select count(*)::text as n ${where}`,
  ]);
  return { rows, total: Number(count!.n) };
}

export interface PartnerPayoutRow {
  id: string;
  program_id: string;
  partner_id: string;
  amount_cents: string;
  commissions_cents: string;
  recovered_cents: string;
  currency: string;
  status: 'pending' | 'paid';
  reference: string | null;
  created_at: Date;
  paid_at: Date | null;
  commission_ids: string[];
}

/**
 * The payouts of the account's claimed records (in live programs), newest first, and their count: pending
 * and paid ones. A canceled payout is left out: its commissions are payable again and show up in the next.
 */
export async function payoutsOfAccount(sql: Sql, accountId: number, q: { limit: number; offset: number }) {
  const where = sql`
    from payouts po
    join programs pr on pr.id = po.program_id and pr.deleted_at is null
    where po.partner_id in (select partner_id from partner_claims where account_id = ${accountId})
      and po.status in ('pending', 'paid')`;
  const [rows, [count]] = await Promise.all([
    sql<PartnerPayoutRow[]>`
      select po.id, po.program_id, po.partner_id, po.amount_cents, po.commissions_cents, po.recovered_cents,
             trim(po.currency) as currency, po.status, po.reference, po.created_at, po.paid_at,
             array(select pc.commission_id::text from payout_commissions pc where pc.payout_id = po.id
                   order by pc.commission_id) as commission_ids
      ${where}
      order by po.id desc
      limit ${q.limit} offset ${q.offset}`,
    sql<{ n: string }[]>`select count(*)::text as n ${where}`,
  ]);
  return { rows, total: Number(count!.n) };
}

export async function payoutMethod(sql: Sql, accountId: number) {
  const [row] = await sql<{ payout_method: unknown; updated_at: Date }[]>`
    select payout_method, updated_at from partner_accounts where id = ${accountId}`;
  return row;
}

export async function setPayoutMethod(sql: Sql | Tx, accountId: number, method: Record<string, unknown>) {
  const [row] = await sql<{ payout_method: unknown; updated_at: Date; email: string }[]>`
    update partner_accounts set payout_method = ${sql.json(method as never)}, updated_at = now()
    where id = ${accountId}
    returning payout_method, updated_at, email`;
  return row;
}
