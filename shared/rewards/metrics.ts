// The figures tier rules read (partner_metrics, 0026_rewards.sql; docs/rewards.md "Tiers"), per
// partner-program and window, and the ladders: SQL only. A program with tier rules has its partners' rows
// locked (created if missing) before a sale or refund decides anything, in key order, so concurrent sales of
// one partner decide one after the other and cross a threshold once; every other writer adds its deltas with
// one statement, also in key order. Nothing takes these rows' locks in another order.
import type { Tx } from '../db/sql.ts';
import type { Metrics, TierMetric, TierRule, TierWindow } from '../domain/tiers.ts';

export interface MetricKey {
  ppId: string;
  /** 1970-01-01 (lifetime) or a UTC month's first day. */
  period: string;
}

export const metricKey = (k: MetricKey) => `${k.ppId}|${k.period}`;

const byKey = (a: MetricKey, b: MetricKey) =>
  Number(a.ppId) - Number(b.ppId) || (a.period < b.period ? -1 : a.period > b.period ? 1 : 0);

/** Locks the rows (creating the missing ones) in key order; returns their figures by metricKey. */
export async function lockMetrics(tx: Tx, keys: readonly MetricKey[]): Promise<Map<string, Metrics>> {
  const sorted = [...new Map(keys.map((k) => [metricKey(k), k])).values()].sort(byKey);
  if (sorted.length === 0) return new Map();
  const pps = sorted.map((k) => k.ppId);
  const periods = sorted.map((k) => k.period);
  await tx`
    insert into partner_metrics (partner_program_id, period)
    select * from unnest(${pps}::bigint[], ${periods}::date[]) as v(pp, period)
    order by pp, period
    on conflict do nothing`;
  const rows = await tx<
    { pp: string; period: string; sales_cents: string; customers: string; commission_cents: string }[]
  >`
    select m.partner_program_id as pp, m.period::text as period, m.sales_cents::text, m.customers::text,
           m.commission_cents::text
    from partner_metrics m
    join unnest(${pps}::bigint[], ${periods}::date[]) as v(pp, period)
      on m.partner_program_id = v.pp and m.period = v.period
    order by m.partner_program_id, m.period
    for no key update of m`;
  return new Map(
    rows.map((r) => [
      metricKey({ ppId: r.pp, period: r.period }),
      {
        sales_cents: Number(r.sales_cents),
        customers: Number(r.customers),
        commission_cents: Number(r.commission_cents),
      },
    ]),
  );
}

/** Adds the deltas (one statement, key order); rows that do not exist yet are created. */
export async function addMetrics(tx: Tx, deltas: readonly (MetricKey & Metrics)[]): Promise<void> {
  const rows = deltas
    .filter((d) => d.sales_cents !== 0 || d.customers !== 0 || d.commission_cents !== 0)
    .sort(byKey);
  if (rows.length === 0) return;
  await tx`
    insert into partner_metrics as m (partner_program_id, period, sales_cents, customers, commission_cents)
    select * from unnest(${rows.map((r) => r.ppId)}::bigint[], ${rows.map((r) => r.period)}::date[],
                         ${rows.map((r) => r.sales_cents)}::bigint[], ${rows.map((r) => r.customers)}::bigint[],
                         ${rows.map((r) => r.commission_cents)}::bigint[])
    on conflict (partner_program_id, period) do update set
      sales_cents = m.sales_cents + excluded.sales_cents,
      customers = m.customers + excluded.customers,
      commission_cents = m.commission_cents + excluded.commission_cents`;
}

/** The ladders of the programs, in order, once per chunk when a memo is given. */
export async function tierRulesOf(
  tx: Tx,
  programIds: readonly number[],
  memo?: Map<string, unknown>,
): Promise<Map<number, TierRule[]>> {
  const out = new Map<number, TierRule[]>();
  const missing: number[] = [];
  for (const id of new Set(programIds)) {
    const known = memo?.get(`tiers:${id}`) as TierRule[] | undefined;
    if (known) out.set(id, known);
    else missing.push(id);
  }
  if (missing.length > 0) {
    const rows = await tx<
      {
        id: string;
        program_id: string;
        from_group_id: string;
        to_group_id: string;
        metric: TierMetric;
        time_window: TierWindow;
        threshold: string;
        carry_existing_customers: boolean;
      }[]
    >`
      select id, program_id, from_group_id, to_group_id, metric, time_window, threshold, carry_existing_customers
      from tier_rules where program_id = any(${missing}::bigint[]) order by program_id, position, id`;
    for (const id of missing) out.set(id, []);
    for (const r of rows) {
      out.get(Number(r.program_id))!.push({
        id: Number(r.id),
        fromGroupId: Number(r.from_group_id),
        toGroupId: Number(r.to_group_id),
        metric: r.metric,
        window: r.time_window,
        threshold: Number(r.threshold),
        carryExistingCustomers: r.carry_existing_customers,
      });
    }
    for (const id of missing) memo?.set(`tiers:${id}`, out.get(id));
  }
  return out;
}
