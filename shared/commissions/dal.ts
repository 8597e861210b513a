// The SQL of the commission lifecycle: the only statements in the codebase that insert commissions or write
// their state (status, review_reason, payout_id, paid_at, deducted_cents, refund_reason), and the reads
// under which the transitions decide (lifecycle.ts). Locks: a commission's row `for no key update` (what its
// update takes; sales inserting rows that reference it take only key-share locks), in id order when several.
import type { Sql, Tx } from '../db/sql.ts';
import type { At, CommissionState, CommissionStatus, CommissionWrite } from './states.ts';
import type { ReviewReason } from './review-reasons.ts';
import type { PricedRule } from '../domain/commission-policy.ts';

/** A commission's row as the API and its webhook events show it, with its program's workspace. */
export interface CommissionRecord {
  id: string;
  workspace_id: string | null;
  program_id: string;
  partner_id: string;
  partner_program_id: string;
  /** Null for a bonus (bonus_id). */
  sale_id: string | null;
  customer_id: string | null;
  status: CommissionStatus;
  amount_cents: string;
  deducted_cents: string;
  currency: string;
  refund_reason: string | null;
  review_reason: ReviewReason | null;
  payable_at: Date | null;
  payout_id: string | null;
  paid_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** The partner code the commission's sale carried (sales.coupon_code), for the events. */
  coupon_code: string | null;
  /** The group whose terms applied, and the rule that priced it (docs/rewards.md; null: seeded rows). */
  group_id: string | null;
  rule: PricedRule | null;
  bonus_id: string | null;
  /** A bonus's period ('once' or 'YYYY-MM'). */
  bonus_period: string | null;
}

const RECORD = (db: Sql | Tx, c: string, p: string) =>
  db.unsafe(`
  ${c}.id, ${p}.workspace_id, ${c}.program_id, ${c}.partner_id, ${c}.partner_program_id, ${c}.sale_id,
  ${c}.customer_id, ${c}.status, ${c}.amount_cents, ${c}.deducted_cents, trim(${c}.currency) as currency,
  ${c}.refund_reason, ${c}.review_reason, ${c}.payable_at, ${c}.payout_id, ${c}.paid_at, ${c}.created_at,
  ${c}.updated_at, (select s.coupon_code from sales s where s.id = ${c}.sale_id) as coupon_code,
  ${c}.group_id, ${c}.rule, ${c}.bonus_id, ${c}.bonus_period`);

interface StateRow {
  id: string;
  status: CommissionStatus;
  amount_cents: string;
  deducted_cents: string;
  currency: string;
  partner_id: string;
  partner_program_id: string;
  program_id: string;
  workspace_id: string | null;
  transaction_id: string | null;
  review_reason: ReviewReason | null;
  payout_id: string | null;
  paid_at: Date | null;
  due: boolean;
}

/** The state's read; `extra` adds columns of tables the caller joins after it. */
const STATE = (db: Sql | Tx, extra = db``) => db`
  select c.id, c.status, c.amount_cents, c.deducted_cents, trim(c.currency) as currency, c.partner_id,
         c.partner_program_id, c.program_id, p.workspace_id, s.transaction_id, c.review_reason, c.payout_id,
         c.paid_at, coalesce(c.payable_at, c.created_at) <= now() as due ${extra}
  from commissions c left join sales s on s.id = c.sale_id join programs p on p.id = c.program_id`;

const num = (v: string | null) => (v === null ? null : Number(v));

export const stateOf = (r: StateRow): CommissionState => ({
  id: Number(r.id),
  status: r.status,
  amount_cents: Number(r.amount_cents),
  deducted_cents: Number(r.deducted_cents),
  currency: r.currency,
  partner_id: Number(r.partner_id),
  partner_program_id: Number(r.partner_program_id),
  program_id: Number(r.program_id),
  workspace_id: num(r.workspace_id),
  transaction_id: r.transaction_id,
  review_reason: r.review_reason,
  payout_id: num(r.payout_id),
  paid_at: r.paid_at,
  due: r.due,
});

/** The commission, locked (undefined when there is none). */
export async function lockCommission(
  tx: Tx,
  by: { id: number } | { saleId: number | string },
): Promise<CommissionState | undefined> {
  const where = 'id' in by ? tx`c.id = ${by.id}` : tx`c.sale_id = ${by.saleId}`;
  const [row] = await tx<StateRow[]>`${STATE(tx)} where ${where} for no key update of c`;
  return row ? stateOf(row) : undefined;
}

/**
 * Up to `limit` commissions the sweep may approve (pending, not held, payable_at passed), oldest payable_at
 * first through the partial index `commissions_due`, locked; one a refund or a payout holds right now is
 * skipped (taken next round).
 */
export async function lockDue(tx: Tx, limit: number): Promise<CommissionState[]> {
  const rows = await tx<StateRow[]>`
    ${STATE(tx)}
    where c.id in (select id from commissions
                   where status = 'pending' and review_reason is null and payable_at <= now()
                   order by payable_at, id
                   limit ${limit}
                   for no key update skip locked)
    order by c.id`;
  return rows.map(stateOf);
}

/**
 * The program's commissions a payout may take now (`joinPayout`'s condition: unpaid, in no payout, not
 * held, the partner approved in the program, approved or partly refunded with something left once due), in
 * id order; locked (`lock`) by a creation, so a concurrent one waits and then sees `payout_id` set.
 */
export async function payableCommissions(
  db: Sql | Tx,
  programId: number,
  partnerIds: number[] | null,
  lock: boolean,
): Promise<CommissionState[]> {
  const rows = await db<StateRow[]>`
    ${STATE(db)}
    join partner_programs pp on pp.id = c.partner_program_id
    where c.program_id = ${programId} and c.payout_id is null and c.paid_at is null
      and c.review_reason is null and pp.status = 'approved'
      and (c.status = 'approved'
           or (c.status = 'refunded' and c.amount_cents > c.deducted_cents
               and coalesce(c.payable_at, c.created_at) <= now()))
      ${partnerIds === null ? db`` : db`and c.partner_id = any(${partnerIds}::bigint[])`}
    order by c.id
    ${lock ? db`for no key update of c` : db``}`;
  return rows.map(stateOf);
}

/** The live commissions of a payout with what it counted for each, locked in id order. */
export async function lockPayoutCommissions(
  tx: Tx,
  payoutId: number,
): Promise<(CommissionState & { counted_cents: number })[]> {
  const rows = await tx<(StateRow & { counted_cents: string })[]>`
    ${STATE(tx, tx`, pc.amount_cents as counted_cents`)}
    join payout_commissions pc on pc.commission_id = c.id and pc.payout_id = ${payoutId} and pc.live
    order by c.id
    for no key update of c`;
  return rows.map((r) => ({ ...stateOf(r), counted_cents: Number(r.counted_cents) }));
}

/**
 * Per partner-program of the program: the clawbacks still owed. What its paid commissions were paid (what
 * their payout counted, or their amount when paid alone) less what they earned net of deductions, less what
 * paid and pending payouts recovered or set aside. Read from the lifecycle's rows, which every transition
 * writes in its own transaction (docs/architecture.md "Money: the rows decide, the ledger follows").
 */
export async function clawbacksOwed(
  db: Sql | Tx,
  programId: number,
  ppIds: number[],
): Promise<Map<number, number>> {
  if (ppIds.length === 0) return new Map();
  const rows = await db<{ pp: string; owed: string }[]>`
    with paid as (
      select c.partner_program_id as pp,
             coalesce(pc.amount_cents, c.amount_cents) - (c.amount_cents - c.deducted_cents) as over
      from commissions c
      left join payout_commissions pc on pc.payout_id = c.payout_id and pc.commission_id = c.id
      where c.partner_program_id = any(${ppIds}::bigint[]) and c.program_id = ${programId}
        and c.paid_at is not null
    ), recovered as (
      select partner_program_id as pp, -recovered_cents as over
      from payouts
      where partner_program_id = any(${ppIds}::bigint[]) and program_id = ${programId}
        and status in ('paid', 'pending')
    )
    select pp, sum(over)::text as owed from (select * from paid union all select * from recovered) x group by pp`;
  return new Map(rows.map((r) => [Number(r.pp), Number(r.owed)]));
}

/** A new commission as `create` inserts it: of a sale, or a bonus (sale_id null, bonus_id and its period). */
export interface NewCommissionRow {
  sale_id: number | null;
  program_id: number;
  partner_id: number | string;
  partner_program_id: number | string;
  customer_id: number | string | null;
  amount_cents: number;
  currency: string;
  payable_at: string;
  /** The group whose terms applied and the rule that priced it (omitted only by seeders: null). */
  group_id?: number | string | null;
  rule?: PricedRule | null;
  bonus_id?: number | null;
  bonus_period?: string | null;
  /** Seeded data only: when it was created (default: now). */
  created_at?: Date;
}

/** What identifies a new commission in the insert's answer: its sale, or its bonus, partner and period. */
const keyOf = (r: {
  sale_id: number | string | null;
  bonus_id?: number | string | null;
  partner_program_id: number | string;
  bonus_period?: string | null;
}) => (r.sale_id !== null ? `s:${r.sale_id}` : `b:${r.bonus_id}:${r.partner_program_id}:${r.bonus_period}`);

/**
 * Inserts commissions (status pending) with one statement; returns their rows in the input's order, without
 * those it did not insert: a bonus's commission of a partner and period that exists already (the unique
 * index commissions_bonus_once decides, whatever runs concurrently).
 */
export async function insertCommissions(tx: Tx, rows: NewCommissionRow[]): Promise<CommissionRecord[]> {
  if (rows.length === 0) return [];
  const col = <K extends keyof NewCommissionRow>(k: K) => rows.map((r) => r[k] ?? null);
  const created = rows.map((r) => r.created_at?.toISOString() ?? null);
  const rules = rows.map((r) => (r.rule ? JSON.stringify(r.rule) : null));
  const got = await tx<CommissionRecord[]>`
    with ins as (
      insert into commissions (sale_id, program_id, partner_id, partner_program_id, customer_id, status,
                               amount_cents, currency, payable_at, created_at, updated_at, group_id, rule,
                               bonus_id, bonus_period)
      select s, p, pa, pp, c, 'pending', a, cur, pay, coalesce(cr, now()), coalesce(cr, now()), g, r::jsonb, b, bp
      from unnest(${col('sale_id')}::bigint[], ${col('program_id')}::bigint[], ${col('partner_id')}::bigint[],
                  ${col('partner_program_id')}::bigint[], ${col('customer_id')}::bigint[],
                  ${col('amount_cents')}::bigint[], ${col('currency')}::text[], ${col('payable_at')}::timestamptz[],
                  ${created}::timestamptz[], ${col('group_id')}::bigint[], ${rules}::text[],
                  ${col('bonus_id')}::bigint[], ${col('bonus_period')}::text[])
        as v(s, p, pa, pp, c, a, cur, pay, cr, g, r, b, bp)
      on conflict do nothing
      returning *)
    select ${RECORD(tx, 'ins', 'p')} from ins join programs p on p.id = ins.program_id`;
  const byKey = new Map(got.map((r) => [keyOf(r), r]));
  return rows.flatMap((r) => byKey.get(keyOf(r)) ?? []);
}

// Which columns a write sets, as bits of one integer per row (one statement text for every transition).
const BITS = {
  status: 1,
  review_reason: 2,
  payout_id: 4,
  paid_at: 8,
  deducted_cents: 16,
  refund_reason: 32,
} as const satisfies Record<keyof CommissionWrite, number>;

// As text, cast in SQL: Postgres reads 'now' as the transaction's time (postgres.js's own timestamp
// serializer would not take it).
const atText = (v: At | null | undefined) =>
  v === undefined || v === null ? null : v === 'now' ? 'now' : v.toISOString();

/**
 * Writes each change (only the columns it names; `'now'` is the transaction's time) and updated_at, with one
 * statement; returns the rows after it, in the changes' order. The caller holds the rows' locks and has
 * decided the change with the lifecycle's rules (states.ts).
 */
export async function writeCommissions(
  tx: Tx,
  changes: { id: number; write: CommissionWrite }[],
  at: At = 'now',
): Promise<CommissionRecord[]> {
  if (changes.length === 0) return [];
  const mask = (w: CommissionWrite) =>
    (Object.keys(w) as (keyof CommissionWrite)[]).reduce((m, k) => m | BITS[k], 0);
  const rows = await tx<CommissionRecord[]>`
    update commissions c set
      status         = case when (v.m & 1) <> 0 then v.status else c.status end,
      review_reason  = case when (v.m & 2) <> 0 then v.review_reason else c.review_reason end,
      payout_id      = case when (v.m & 4) <> 0 then v.payout_id else c.payout_id end,
      paid_at        = case when (v.m & 8) <> 0 then v.paid_at::timestamptz else c.paid_at end,
      deducted_cents = case when (v.m & 16) <> 0 then v.deducted_cents else c.deducted_cents end,
      refund_reason  = case when (v.m & 32) <> 0 then v.refund_reason else c.refund_reason end,
      updated_at     = coalesce(${at === 'now' ? null : at.toISOString()}::timestamptz, now())
    from unnest(${changes.map((c) => c.id)}::bigint[], ${changes.map((c) => mask(c.write))}::int[],
                ${changes.map((c) => c.write.status ?? null)}::text[],
                ${changes.map((c) => c.write.review_reason ?? null)}::text[],
                ${changes.map((c) => c.write.payout_id ?? null)}::bigint[],
                ${changes.map((c) => atText(c.write.paid_at))}::text[],
                ${changes.map((c) => c.write.deducted_cents ?? null)}::bigint[],
                ${changes.map((c) => c.write.refund_reason ?? null)}::text[])
      as v(id, m, status, review_reason, payout_id, paid_at, deducted_cents, refund_reason),
      programs p
    where c.id = v.id and p.id = c.program_id
    returning ${RECORD(tx, 'c', 'p')}`;
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return changes.map((c) => byId.get(c.id)!);
}

/**
 * The payout's rows of the commissions that join it, with what it counts for each. The live unique index
 * on payout_commissions stops a commission from entering two live payouts, should a lock ever fail to.
 */
export async function insertPayoutItems(
  tx: Tx,
  items: { payout_id: number; commission_id: number; cents: number }[],
): Promise<void> {
  if (items.length === 0) return;
  await tx`
    insert into payout_commissions (payout_id, commission_id, amount_cents)
    select * from unnest(${items.map((i) => i.payout_id)}::bigint[], ${items.map((i) => i.commission_id)}::bigint[],
                         ${items.map((i) => i.cents)}::bigint[])`;
}

/** A canceled payout's rows stop being live (kept: the payout still lists its commissions). */
export async function retirePayoutItems(tx: Tx, payoutId: number): Promise<void> {
  await tx`update payout_commissions set live = false where payout_id = ${payoutId}`;
}
