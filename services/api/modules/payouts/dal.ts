// SQL of payouts. Every write takes the program's row lock first (`for no key update`: sales inserting
// commissions only take key-share locks on it, so they do not wait), so creations, payments and cancels of
// one program's payouts run one at a time and each sees the others' results; then the payout, then its
// commissions in id order, then (through the ledger's own code) the partner and the partner-program.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { LedgerEffect } from '../../../../shared/contracts/commands.ts';
import { applyLedgerEntries } from '../../../../shared/db/ledger.ts';
import { beginRetrying } from '../../../../shared/db/transactions.ts';

export type PayoutStatus = 'pending' | 'paid' | 'canceled';

export interface PayoutRow {
  id: string;
  program_id: string;
  partner_id: string;
  partner_program_id: string;
  partner_name: string;
  partner_email: string;
  payout_method: unknown;
  currency: string;
  amount_cents: string;
  commissions_cents: string;
  recovered_cents: string;
  status: PayoutStatus;
  reference: string | null;
  created_at: Date;
  paid_at: Date | null;
  canceled_at: Date | null;
  commission_ids: string[];
}

/**
 * The partner's payout method as it is now, as a SQL expression over the partner id column given: the method
 * a partner account that claimed the record set in the partner portal (the most recently set one, should
 * several accounts have claimed it). Null when none has. Only a claim reveals it, and a claim takes the
 * person's consent (partner-claims/service.ts): a workspace that merely added a partner with someone's email
 * sees no method. A verified account only: one made by an application form never claimed anything, but
 * older data may hold such claims. The column is always qualified: a bare `partner_id` inside the subquery
 * is partner_claims' own, which made every claim match.
 */
const currentMethod = (
  sql: Sql | Tx,
  partnerIdColumn: 'po.partner_id' | 'pa.id' | 'payouts.partner_id',
) => sql`
  (select a.payout_method from partner_claims pc join partner_accounts a on a.id = pc.account_id
   where pc.partner_id = ${sql.unsafe(partnerIdColumn)} and a.payout_method is not null
     and a.email_verified_at is not null
   order by a.payout_method ->> 'updated_at' desc nulls last, a.id desc
   limit 1)`;

/** A paid payout shows the method it was paid with; a pending or canceled one the current method. */
const SELECT = (sql: Sql | Tx) => sql`
  select po.id, po.program_id, po.partner_id, po.partner_program_id, pa.name as partner_name,
         pa.email as partner_email, coalesce(po.payout_method, ${currentMethod(sql, 'po.partner_id')}) as payout_method,
         po.currency, po.amount_cents, po.commissions_cents, po.recovered_cents, po.status, po.reference,
         po.created_at, po.paid_at, po.canceled_at,
         array(select pc.commission_id::text from payout_commissions pc where pc.payout_id = po.id
               order by pc.commission_id) as commission_ids
  from payouts po join partners pa on pa.id = po.partner_id`;

export function payoutsOfProgram(
  sql: Sql,
  programId: number,
  q: { status?: PayoutStatus; limit: number; offset: number },
) {
  return sql<PayoutRow[]>`
    ${SELECT(sql)}
    where po.program_id = ${programId} ${q.status === undefined ? sql`` : sql`and po.status = ${q.status}`}
    order by po.id desc
    limit ${q.limit} offset ${q.offset}`;
}

export async function findPayout(sql: Sql | Tx, payoutId: number): Promise<PayoutRow | undefined> {
  const [row] = await sql<PayoutRow[]>`${SELECT(sql)} where po.id = ${payoutId}`;
  return row;
}

function payoutsByIds(tx: Tx, ids: number[]) {
  return tx<PayoutRow[]>`${SELECT(tx)} where po.id = any(${ids}::bigint[]) order by po.partner_id, po.id`;
}

/** Partners' names, emails and current payout methods, by id. */
export async function partnersWithMethods(
  sql: Sql,
  partnerIds: number[],
): Promise<Map<number, { name: string; email: string; payout_method: unknown }>> {
  if (partnerIds.length === 0) return new Map();
  const rows = await sql<{ id: string; name: string; email: string; payout_method: unknown }[]>`
    select pa.id, pa.name, pa.email, ${currentMethod(sql, 'pa.id')} as payout_method
    from partners pa where pa.id = any(${[...new Set(partnerIds)]}::bigint[])`;
  return new Map(
    rows.map((r) => [Number(r.id), { name: r.name, email: r.email, payout_method: r.payout_method }]),
  );
}

export async function programOfPayout(sql: Sql, payoutId: number): Promise<number | undefined> {
  const [row] = await sql<{ program_id: string }[]>`select program_id from payouts where id = ${payoutId}`;
  return row ? Number(row.program_id) : undefined;
}

export interface ProgramForPayouts {
  id: string;
  workspace_id: string;
  name: string;
  currency: string;
  min_payout_cents: string;
}

/** The program's row, locked for the payout write (undefined when it is gone). */
async function lockProgram(tx: Tx, programId: number): Promise<ProgramForPayouts | undefined> {
  const [p] = await tx<ProgramForPayouts[]>`
    select id, workspace_id, name, trim(currency) as currency, min_payout_cents
    from programs where id = ${programId} and deleted_at is null for no key update`;
  return p;
}

export async function programForPayouts(sql: Sql, programId: number): Promise<ProgramForPayouts | undefined> {
  const [p] = await sql<ProgramForPayouts[]>`
    select id, workspace_id, name, trim(currency) as currency, min_payout_cents
    from programs where id = ${programId} and deleted_at is null`;
  return p;
}

export interface CandidateRow {
  id: string;
  partner_id: string;
  partner_program_id: string;
  net_cents: string;
  currency: string;
}

/**
 * The commissions a payout may take now: unpaid, in no payout, not held for review, their partner approved
 * in the program, and approved (or partly refunded with something left, once payable). Locked (`lock`) by a
 * creation: a concurrent creation waits, then re-checks `payout_id is null` on the row it gets.
 */
function candidates(sql: Sql | Tx, programId: number, partnerIds: number[] | null, lock: boolean) {
  return sql<CandidateRow[]>`
    select c.id, c.partner_id, c.partner_program_id, c.amount_cents - c.deducted_cents as net_cents,
           trim(c.currency) as currency
    from commissions c join partner_programs pp on pp.id = c.partner_program_id
    where c.program_id = ${programId} and c.payout_id is null and c.paid_at is null
      and c.review_reason is null and pp.status = 'approved'
      and (c.status = 'approved'
           or (c.status = 'refunded' and c.amount_cents > c.deducted_cents
               and coalesce(c.payable_at, c.created_at) <= now()))
      ${partnerIds === null ? sql`` : sql`and c.partner_id = any(${partnerIds}::bigint[])`}
    order by c.id
    ${lock ? sql`for no key update of c` : sql``}`;
}

/**
 * Per partner-program of the program: the clawbacks still owed. What its paid commissions were paid (what
 * their payout counted, or their amount when paid alone) less what they earned net of deductions, less what
 * paid and pending payouts recovered or set aside. Read from the commissions and payouts (written in the
 * same transactions as the refunds and payments), not from the ledger, which is applied a moment later.
 */
async function owedClawbacks(
  sql: Sql | Tx,
  programId: number,
  ppIds: number[],
): Promise<Map<number, number>> {
  if (ppIds.length === 0) return new Map();
  const rows = await sql<{ pp: string; owed: string }[]>`
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

/** What a creation would see now (for the preview): candidates and clawbacks owed, without locks. */
export async function payoutInputs(sql: Sql, programId: number, partnerIds: number[] | null) {
  const rows = await candidates(sql, programId, partnerIds, false);
  const owed = await owedClawbacks(sql, programId, ppIdsOf(rows));
  return { rows, owed };
}

const ppIdsOf = (rows: CandidateRow[]) => [...new Set(rows.map((r) => Number(r.partner_program_id)))];

/** A planned payout as the creation writes it. */
export interface NewPayout {
  partner_id: number;
  partner_program_id: number;
  currency: string;
  amount_cents: number;
  commissions_cents: number;
  recovered_cents: number;
  commission_ids: number[];
  commission_cents: number[];
}

/**
 * Creates the program's payouts in one transaction: the program locked, its candidates locked, the plan
 * made from them (`plan`, the service's rule), the payouts and their commissions written, and `after` (the
 * webhook events) run with the new rows. Undefined when the program is gone.
 */
export function createPayouts(
  sql: Sql,
  programId: number,
  partnerIds: number[] | null,
  plan: (rows: CandidateRow[], owed: Map<number, number>, program: ProgramForPayouts) => NewPayout[],
  after: (tx: Tx, created: PayoutRow[], program: ProgramForPayouts) => Promise<void>,
): Promise<PayoutRow[] | undefined> {
  return beginRetrying(sql, async (tx) => {
    const program = await lockProgram(tx, programId);
    if (!program) return undefined;
    const rows = await candidates(tx, programId, partnerIds, true);
    const owed = await owedClawbacks(tx, programId, ppIdsOf(rows));
    const planned = plan(rows, owed, program);
    if (planned.length === 0) return [];
    const inserted = await tx<{ id: string; partner_program_id: string }[]>`
      insert into payouts (program_id, partner_id, partner_program_id, currency, amount_cents, commissions_cents,
                           recovered_cents)
      select ${programId}, pa, pp, cur, a, c, r
      from unnest(${planned.map((p) => p.partner_id)}::bigint[], ${planned.map((p) => p.partner_program_id)}::bigint[],
                  ${planned.map((p) => p.currency)}::text[], ${planned.map((p) => p.amount_cents)}::bigint[],
                  ${planned.map((p) => p.commissions_cents)}::bigint[], ${planned.map((p) => p.recovered_cents)}::bigint[])
        as v(pa, pp, cur, a, c, r)
      returning id, partner_program_id`;
    const payoutOf = new Map(inserted.map((r) => [Number(r.partner_program_id), Number(r.id)]));
    const items = planned.flatMap((p) =>
      p.commission_ids.map((id, i) => ({
        payout: payoutOf.get(p.partner_program_id)!,
        commission: id,
        cents: p.commission_cents[i]!,
      })),
    );
    // The live unique index on payout_commissions stops a commission from entering two live payouts, should
    // the locks above ever fail to.
    await tx`
      insert into payout_commissions (payout_id, commission_id, amount_cents)
      select * from unnest(${items.map((i) => i.payout)}::bigint[], ${items.map((i) => i.commission)}::bigint[],
                           ${items.map((i) => i.cents)}::bigint[])`;
    await tx`
      update commissions c set payout_id = v.payout, updated_at = now()
      from unnest(${items.map((i) => i.commission)}::bigint[], ${items.map((i) => i.payout)}::bigint[])
        as v(commission, payout)
      where c.id = v.commission`;
    const created = await payoutsByIds(tx, [...payoutOf.values()]);
    await after(tx, created, program);
    return created;
  });
}

/** A payout's commissions as mark-paid reads them, locked. */
export interface PayoutCommission {
  id: string;
  status: string;
  counted_cents: string;
}

/**
 * Marks the payout paid in one transaction: the program and the payout locked, the status checked
 * (`check`), its commissions locked, `paid` (those still pending or approved; a commission refunded while
 * the payout was pending keeps its status) with paid_at, the ledger entries (`entries`) applied, the payout
 * `paid` with its reference and the method it was paid with, then `after` (notification and events).
 * Undefined when the payout is gone.
 */
export function markPayoutPaid(
  sql: Sql,
  payoutId: number,
  rules: {
    check: (status: PayoutStatus) => void;
    reference: string | null;
    entries: (payout: PayoutRow, commissions: PayoutCommission[]) => LedgerEffect[];
    after: (tx: Tx, payout: PayoutRow, commissions: PayoutCommission[]) => Promise<void>;
  },
): Promise<PayoutRow | undefined> {
  return beginRetrying(sql, async (tx) => {
    const locked = await lockPayout(tx, payoutId);
    if (!locked) return undefined;
    rules.check(locked.status);
    const before = (await findPayout(tx, payoutId))!;
    const commissions = await tx<PayoutCommission[]>`
      select c.id, c.status, pc.amount_cents as counted_cents
      from payout_commissions pc join commissions c on c.id = pc.commission_id
      where pc.payout_id = ${payoutId} and pc.live
      order by c.id
      for no key update of c`;
    await tx`
      update commissions
      set status = case when status in ('pending', 'approved') then 'paid' else status end,
          paid_at = now(), updated_at = now()
      where id = any(${commissions.map((c) => c.id)}::bigint[])`;
    await applyLedgerEntries(tx, rules.entries(before, commissions));
    await tx`
      update payouts set status = 'paid', paid_at = now(), updated_at = now(), reference = ${rules.reference},
                         payout_method = ${currentMethod(tx, 'payouts.partner_id')}
      where id = ${payoutId}`;
    const paid = (await findPayout(tx, payoutId))!;
    await rules.after(tx, paid, commissions);
    return paid;
  });
}

/**
 * Cancels the payout in one transaction: its commissions leave it (payable again by the next creation),
 * its payout_commissions rows stop being live, the payout `canceled`. Undefined when the payout is gone.
 */
export function cancelPayout(
  sql: Sql,
  payoutId: number,
  check: (status: PayoutStatus) => void,
): Promise<PayoutRow | undefined> {
  return beginRetrying(sql, async (tx) => {
    const locked = await lockPayout(tx, payoutId);
    if (!locked) return undefined;
    check(locked.status);
    await tx`
      update commissions set payout_id = null, updated_at = now()
      where id in (select commission_id from payout_commissions where payout_id = ${payoutId} and live)
        and payout_id = ${payoutId}`;
    await tx`update payout_commissions set live = false where payout_id = ${payoutId}`;
    await tx`
      update payouts set status = 'canceled', canceled_at = now(), updated_at = now() where id = ${payoutId}`;
    return findPayout(tx, payoutId);
  });
}

/** The program's row lock, then the payout's (the order every payout write uses). */
async function lockPayout(tx: Tx, payoutId: number): Promise<{ status: PayoutStatus } | undefined> {
  const [p] = await tx<{ program_id: string }[]>`select program_id from payouts where id = ${payoutId}`;
  if (!p) return undefined;
  await tx`select 1 from programs where id = ${p.program_id} for no key update`;
  const [row] = await tx<{ status: PayoutStatus }[]>`
    select status from payouts where id = ${payoutId} for update`;
  return row;
}
