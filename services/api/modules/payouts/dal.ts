// SQL of the payouts table. Every payout write (operations.ts) takes the program's row lock first (`for no
// key update`: sales inserting commissions only take key-share locks on it, so they do not wait), so
// creations, payments and cancels of one program's payouts run one at a time and each sees the others'
// results; then the payout, then its commissions in id order (the lifecycle's transitions, shared/commissions),
// then (through the ledger's own code) the partner and the partner-program.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { PayoutStatus, PayoutViewRow } from '../../../../shared/views/payout.ts';

export type { PayoutStatus };

/** A payout as its view reads it, and the partner-program it pays. */
export interface PayoutRow extends PayoutViewRow {
  partner_program_id: string;
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
         po.created_at, po.paid_at, po.canceled_at, po.updated_at,
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

export function payoutsByIds(tx: Tx, ids: number[]) {
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
export async function lockProgram(tx: Tx, programId: number): Promise<ProgramForPayouts | undefined> {
  const [p] = await tx<ProgramForPayouts[]>`
    select id, workspace_id, name, trim(currency) as currency, min_payout_cents
    from programs where id = ${programId} and deleted_at is null for no key update`;
  return p;
}

/** The program's workspace and name (a payment's event and notification). */
export async function programOfPayoutRow(tx: Tx, programId: number) {
  const [program] = await tx<{ workspace_id: string; name: string }[]>`
    select workspace_id, name from programs where id = ${programId}`;
  return program;
}

export async function programForPayouts(sql: Sql, programId: number): Promise<ProgramForPayouts | undefined> {
  const [p] = await sql<ProgramForPayouts[]>`
    select id, workspace_id, name, trim(currency) as currency, min_payout_cents
    from programs where id = ${programId} and deleted_at is null`;
  return p;
}

/** Inserts the planned payouts (pending); returns each one's id by partner-program. */
export async function insertPayouts(
  tx: Tx,
  programId: number,
  planned: {
    partner_id: number;
    partner_program_id: number;
    currency: string;
    amount_cents: number;
    commissions_cents: number;
    recovered_cents: number;
  }[],
): Promise<Map<number, number>> {
  const inserted = await tx<{ id: string; partner_program_id: string }[]>`
    insert into payouts (program_id, partner_id, partner_program_id, currency, amount_cents, commissions_cents,
                         recovered_cents)
    select ${programId}, pa, pp, cur, a, c, r
    from unnest(${planned.map((p) => p.partner_id)}::bigint[], ${planned.map((p) => p.partner_program_id)}::bigint[],
                ${planned.map((p) => p.currency)}::text[], ${planned.map((p) => p.amount_cents)}::bigint[],
                ${planned.map((p) => p.commissions_cents)}::bigint[], ${planned.map((p) => p.recovered_cents)}::bigint[])
      as v(pa, pp, cur, a, c, r)
    returning id, partner_program_id`;
  return new Map(inserted.map((r) => [Number(r.partner_program_id), Number(r.id)]));
}

/** The payout `paid`, with its reference and the payout method it was paid with. */
export async function setPayoutPaid(tx: Tx, payoutId: number, reference: string | null): Promise<void> {
  await tx`
    update payouts set status = 'paid', paid_at = now(), updated_at = now(), reference = ${reference},
                       payout_method = ${currentMethod(tx, 'payouts.partner_id')}
    where id = ${payoutId}`;
}

/** The payout `canceled` (its commissions left it: lifecycle `leavePayout`). */
export async function setPayoutCanceled(tx: Tx, payoutId: number): Promise<void> {
  await tx`update payouts set status = 'canceled', canceled_at = now(), updated_at = now() where id = ${payoutId}`;
}

/** The program's row lock, then the payout's (the order every payout write uses). */
export async function lockPayout(tx: Tx, payoutId: number): Promise<{ status: PayoutStatus } | undefined> {
  const [p] = await tx<{ program_id: string }[]>`select program_id from payouts where id = ${payoutId}`;
  if (!p) return undefined;
  await tx`select 1 from programs where id = ${p.program_id} for no key update`;
  const [row] = await tx<{ status: PayoutStatus }[]>`
    select status from payouts where id = ${payoutId} for update`;
  return row;
}
