// SQL of bonuses: list, create (with the progress partners made since it starts), soft delete
// (0026_rewards.sql `bonuses`, `bonus_progress`).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { BonusMetric, BonusPeriod } from '../../../../shared/domain/bonuses.ts';

/** A bonus to create, normalised (service.ts `bonusInput`). */
export interface BonusInput {
  name: string;
  groupIds: number[] | null;
  metric: BonusMetric;
  threshold: number;
  amountCents: number;
  period: BonusPeriod;
  startsAt: Date;
  endsAt: Date;
}

export interface BonusRow {
  id: string;
  program_id: string;
  name: string;
  group_ids: string[] | null;
  metric: BonusMetric;
  threshold: string;
  amount_cents: string;
  period: BonusPeriod;
  starts_at: Date;
  ends_at: Date;
  awarded: string;
  created_at: Date;
}

const SELECT = (db: Sql | Tx) => db`
  select b.id, b.program_id, b.name, b.group_ids, b.metric, b.threshold, b.amount_cents, b.period, b.starts_at,
         b.ends_at, b.created_at, (select count(*) from commissions c where c.bonus_id = b.id)::text as awarded
  from bonuses b`;

export function bonusesOf(db: Sql | Tx, programId: number) {
  return db<
    BonusRow[]
  >`${SELECT(db)} where b.program_id = ${programId} and b.deleted_at is null order by b.id`;
}

export async function bonusOf(db: Sql | Tx, programId: number, bonusId: number) {
  // A path id that is not one (pathId's NaN) is no bonus: 404, as the other modules answer.
  if (!Number.isSafeInteger(bonusId)) return undefined;
  const [row] = await db<BonusRow[]>`
    ${SELECT(db)} where b.id = ${bonusId} and b.program_id = ${programId} and b.deleted_at is null`;
  return row;
}

/** The program's live groups, share-locked (a deletion waits for the bonus that names one). */
export async function lockGroups(tx: Tx, programId: number): Promise<Set<number>> {
  const rows = await tx<{ id: string }[]>`
    select id from program_groups where program_id = ${programId} and deleted_at is null order by id for share`;
  return new Set(rows.map((r) => Number(r.id)));
}

export async function insertBonus(tx: Tx, programId: number, b: BonusInput): Promise<number> {
  const [row] = await tx<{ id: string }[]>`
    insert into bonuses (program_id, name, group_ids, metric, threshold, amount_cents, period, starts_at, ends_at)
    values (${programId}, ${b.name}, ${b.groupIds}::bigint[], ${b.metric}, ${b.threshold}, ${b.amountCents},
            ${b.period}, ${b.startsAt.toISOString()}, ${b.endsAt.toISOString()})
    returning id`;
  return Number(row!.id);
}

/**
 * The progress partners made since the bonus starts (its sales so far, by the group that priced each, or
 * the partner's when none did), written as the sale path would have; returns the periods at or past the
 * threshold, with what a commission for them needs.
 */
export async function backfillProgress(tx: Tx, bonusId: number) {
  await tx`
    with b as (select * from bonuses where id = ${bonusId}),
    sold as (
      select s.partner_program_id as pp, s.customer_id, s.sale_date, s.amount_cents - coalesce(s.refunded_cents, 0) as net,
             case when b.period = 'once' then 'once' else to_char(s.sale_date at time zone 'UTC', 'YYYY-MM') end as period,
             b.metric
      from b join sales s on s.program_id = b.program_id
      join partner_programs pp on pp.id = s.partner_program_id
      left join commissions c on c.sale_id = s.id
      where not s.is_test and s.customer_id is not null and s.sale_date >= b.starts_at
        and s.sale_date < least(b.ends_at, now())
        and (b.group_ids is null or coalesce(c.group_id, pp.group_id) = any(b.group_ids))
    ), converted as (
      select cu.partner_program_id as pp,
             case when b.period = 'once' then 'once' else to_char(cu.first_purchase_date at time zone 'UTC', 'YYYY-MM') end
               as period
      from b join customers cu on cu.program_id = b.program_id
      join partner_programs pp on pp.id = cu.partner_program_id
      where b.metric = 'conversions' and cu.first_purchase_date >= b.starts_at
        and cu.first_purchase_date < least(b.ends_at, now())
        and (b.group_ids is null or pp.group_id = any(b.group_ids))
    ), progress as (
      select pp, period, sum(net) as value from sold where metric = 'sales_cents' group by pp, period
      union all
      select pp, period, count(distinct customer_id) from sold where metric = 'customers' group by pp, period
      union all
      select pp, period, count(*) from converted group by pp, period
    )
    insert into bonus_progress (bonus_id, partner_program_id, period, value)
    select ${bonusId}, pp, period, value from progress where value <> 0
    order by pp, period`;
  return tx<
    {
      period: string;
      partner_program_id: string;
      partner_id: string;
      group_id: string;
      hold_days: number;
      amount_cents: string;
      currency: string;
      program_id: string;
    }[]
  >`
    select bp.period, bp.partner_program_id, pp.partner_id, pp.group_id,
           coalesce(g.hold_days, pr.hold_days) as hold_days, b.amount_cents, trim(pr.currency) as currency,
           b.program_id
    from bonus_progress bp join bonuses b on b.id = bp.bonus_id
    join partner_programs pp on pp.id = bp.partner_program_id
    join program_groups g on g.id = pp.group_id join programs pr on pr.id = b.program_id
    where bp.bonus_id = ${bonusId} and bp.value >= b.threshold and bp.awarded_at is null
    order by bp.partner_program_id, bp.period`;
}

export interface ProgressRow {
  partner_id: string;
  name: string;
  group_name: string;
  period: string;
  value: string;
  awarded_at: Date | null;
}

/** The partners' progress towards the bonus in one period (`once`, or a UTC month 'YYYY-MM'), highest first. */
export function progressOf(db: Sql, bonusId: number, period: string, limit: number) {
  return db<ProgressRow[]>`
    select pp.partner_id, pa.name, g.name as group_name, bp.period, bp.value::text, bp.awarded_at
    from bonus_progress bp
    join partner_programs pp on pp.id = bp.partner_program_id
    join partners pa on pa.id = pp.partner_id
    join program_groups g on g.id = pp.group_id
    where bp.bonus_id = ${bonusId} and bp.period = ${period} and (bp.value <> 0 or bp.awarded_at is not null)
    order by bp.value desc, pp.partner_id
    limit ${limit}`;
}

/** Soft delete: the bonus stops counting; what it paid stays. False when there is no such live bonus. */
export async function deleteBonus(db: Sql, programId: number, bonusId: number): Promise<boolean> {
  if (!Number.isSafeInteger(bonusId)) return false;
  const rows = await db`
    update bonuses set deleted_at = now()
    where id = ${bonusId} and program_id = ${programId} and deleted_at is null returning id`;
  return rows.length > 0;
}
