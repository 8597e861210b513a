// Bonuses' SQL (0026_rewards.sql `bonuses`, `bonus_progress`; docs/rewards.md "Bonuses"): a program's live
// bonuses, progress added in key order (each row's lock taken by the add itself, so concurrent sales of one
// partner add one after the other and each sees the sum so far), and the periods whose commission was made.
import type { Tx } from '../db/sql.ts';
import type { Bonus, BonusMetric, BonusPeriod } from '../domain/bonuses.ts';

export interface ProgressKey {
  bonusId: number;
  ppId: string;
  period: string;
}

const byKey = (a: ProgressKey, b: ProgressKey) =>
  a.bonusId - b.bonusId ||
  Number(a.ppId) - Number(b.ppId) ||
  (a.period < b.period ? -1 : a.period > b.period ? 1 : 0);

/** The programs' bonuses not deleted and not over before `since`, once per chunk when a memo is given. */
export async function bonusesOf(
  tx: Tx,
  programIds: readonly number[],
  since: Date,
  memo?: Map<string, unknown>,
): Promise<Map<number, Bonus[]>> {
  const out = new Map<number, Bonus[]>();
  const missing = [...new Set(programIds)].filter((id) => {
    const known = memo?.get(`bonuses:${id}`) as Bonus[] | undefined;
    if (known) out.set(id, known);
    return !known;
  });
  if (missing.length === 0) return out;
  const rows = await tx<
    {
      id: string;
      program_id: string;
      group_ids: string[] | null;
      metric: BonusMetric;
      threshold: string;
      amount_cents: string;
      period: BonusPeriod;
      starts_at: Date;
      ends_at: Date;
    }[]
  >`
    select id, program_id, group_ids, metric, threshold, amount_cents, period, starts_at, ends_at
    from bonuses
    where program_id = any(${missing}::bigint[]) and deleted_at is null and ends_at > ${since.toISOString()}::timestamptz
    order by id`;
  for (const id of missing) out.set(id, []);
  for (const r of rows) {
    out.get(Number(r.program_id))!.push({
      id: Number(r.id),
      programId: Number(r.program_id),
      groupIds: r.group_ids === null ? null : r.group_ids.map(Number),
      metric: r.metric,
      threshold: Number(r.threshold),
      amountCents: Number(r.amount_cents),
      period: r.period,
      startsAt: r.starts_at,
      endsAt: r.ends_at,
    });
  }
  for (const id of missing) memo?.set(`bonuses:${id}`, out.get(id));
  return out;
}

/**
 * Adds the deltas to the progress rows (created when missing), one statement in key order; returns each
 * row's value after it and whether its commission was made already.
 */
export async function addProgress(
  tx: Tx,
  deltas: readonly (ProgressKey & { delta: number })[],
): Promise<(ProgressKey & { value: number; awarded: boolean })[]> {
  const rows = [...deltas].sort(byKey);
  if (rows.length === 0) return [];
  const got = await tx<{ bonus_id: string; pp: string; period: string; value: string; awarded: boolean }[]>`
    insert into bonus_progress as b (bonus_id, partner_program_id, period, value)
    select * from unnest(${rows.map((r) => r.bonusId)}::bigint[], ${rows.map((r) => r.ppId)}::bigint[],
                         ${rows.map((r) => r.period)}::text[], ${rows.map((r) => r.delta)}::bigint[])
    on conflict (bonus_id, partner_program_id, period) do update set value = b.value + excluded.value
    returning b.bonus_id, b.partner_program_id as pp, b.period, b.value::text, b.awarded_at is not null as awarded`;
  return got.map((r) => ({
    bonusId: Number(r.bonus_id),
    ppId: r.pp,
    period: r.period,
    value: Number(r.value),
    awarded: r.awarded,
  }));
}

/** Records that these periods' commissions were made (or existed already). */
export async function markAwarded(tx: Tx, keys: readonly ProgressKey[]): Promise<void> {
  if (keys.length === 0) return;
  await tx`
    update bonus_progress b set awarded_at = coalesce(b.awarded_at, now())
    from unnest(${keys.map((k) => k.bonusId)}::bigint[], ${keys.map((k) => k.ppId)}::bigint[],
                ${keys.map((k) => k.period)}::text[]) as v(bonus, pp, period)
    where b.bonus_id = v.bonus and b.partner_program_id = v.pp and b.period = v.period`;
}
