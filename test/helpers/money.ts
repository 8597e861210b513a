// The money invariants of payouts (ARCHITECTURE invariant 12), read straight from the tables, for the tests
// that try to break them: what a partner was paid plus their balance equals what their commissions earned
// less deductions, to the cent; balances equal the sums of their ledger entries; no commission is in two
// payouts or paid twice.
import type { Test } from 'tap';
import type { Sql } from '../../shared/db/sql.ts';

export interface Money {
  /** Σ commissions.amount_cents */
  earned: number;
  /** Σ commissions.deducted_cents (refunds and rejections) */
  deducted: number;
  /** What was sent: paid payouts' amount_cents + commissions paid alone (their amount_cents). */
  paid: number;
  /** partner_programs.balance_cents (or partners.balance_cents for a partner) */
  balance: number;
  /** Σ of the ledger's column for it */
  ledger: number;
}

/** The money of one partner-program. */
export async function moneyOfPartnerProgram(sql: Sql, partnerProgramId: number): Promise<Money> {
  const [r] = await sql<Record<keyof Money, string>[]>`
    select
      (select coalesce(sum(amount_cents), 0) from commissions where partner_program_id = ${partnerProgramId})::text as earned,
      (select coalesce(sum(deducted_cents), 0) from commissions where partner_program_id = ${partnerProgramId})::text as deducted,
      ((select coalesce(sum(amount_cents), 0) from payouts where partner_program_id = ${partnerProgramId} and status = 'paid')
       + (select coalesce(sum(amount_cents), 0) from commissions
          where partner_program_id = ${partnerProgramId} and paid_at is not null and payout_id is null))::text as paid,
      (select balance_cents from partner_programs where id = ${partnerProgramId})::text as balance,
      (select coalesce(sum(program_cents), 0) from ledger_entries where partner_program_id = ${partnerProgramId})::text as ledger`;
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)])) as unknown as Money;
}

/** The money of one partner across its programs (one currency in the tests that use it). */
export async function moneyOfPartner(sql: Sql, partnerId: number): Promise<Money> {
  const [r] = await sql<Record<keyof Money, string>[]>`
    select
      (select coalesce(sum(amount_cents), 0) from commissions where partner_id = ${partnerId})::text as earned,
      (select coalesce(sum(deducted_cents), 0) from commissions where partner_id = ${partnerId})::text as deducted,
      ((select coalesce(sum(amount_cents), 0) from payouts where partner_id = ${partnerId} and status = 'paid')
       + (select coalesce(sum(amount_cents), 0) from commissions
          where partner_id = ${partnerId} and paid_at is not null and payout_id is null))::text as paid,
      (select balance_cents from partners where id = ${partnerId})::text as balance,
      (select coalesce(sum(partner_cents), 0) from ledger_entries where partner_id = ${partnerId})::text as ledger`;
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)])) as unknown as Money;
}

/**
 * Whether the ledger has applied everything the commission rows say happened: a credit per commission, a
 * deduction per deducted commission, a payment per paid commission, nothing held. Until then the balance
 * lags the rows by design (entries are applied a moment after the change), and the invariant is checked
 * once it has caught up.
 */
export async function ledgerCaughtUp(sql: Sql, partnerProgramIds: number[]): Promise<boolean> {
  const [r] = await sql<{ missing: number; held: number }[]>`
    select
      (select count(*) from commissions c
       where c.partner_program_id = any(${partnerProgramIds}::bigint[])
         and (not exists (select 1 from ledger_entries e where e.entry_key = 'commission:' || c.id || ':created')
              or (c.deducted_cents > 0
                  and not exists (select 1 from ledger_entries e where e.entry_key = 'commission:' || c.id || ':refund'))
              or (c.paid_at is not null
                  and not exists (select 1 from ledger_entries e where e.entry_key = 'commission:' || c.id || ':paid'))))::int
        as missing,
      (select count(*) from ledger_held where partner_program_id = any(${partnerProgramIds}::bigint[]))::int as held`;
  return r!.missing === 0 && r!.held === 0;
}

/** Commissions in two live payouts, or whose payout_id disagrees with their live payout (should be none). */
export async function payoutOverlaps(sql: Sql, programId: number): Promise<string[]> {
  const twice = await sql<{ commission_id: string; n: number }[]>`
    select pc.commission_id, count(*)::int as n
    from payout_commissions pc join payouts po on po.id = pc.payout_id
    where po.program_id = ${programId} and po.status <> 'canceled'
    group by pc.commission_id having count(*) > 1`;
  const mismatched = await sql<{ id: string }[]>`
    select c.id from commissions c
    left join payout_commissions pc on pc.commission_id = c.id and pc.live
    where c.program_id = ${programId} and c.payout_id is distinct from pc.payout_id`;
  const paidTwice = await sql<{ commission_id: string }[]>`
    select commission_id from ledger_entries
    where kind = 'commission_paid' and commission_id in (select id from commissions where program_id = ${programId})
    group by commission_id having count(*) > 1`;
  return [
    ...twice.map((r) => `commission ${r.commission_id} is in ${r.n} live payouts`),
    ...mismatched.map((r) => `commission ${r.id}: payout_id disagrees with its live payout`),
    ...paidTwice.map((r) => `commission ${r.commission_id} has two payment entries`),
  ];
}

/** Asserts the invariants of every given partner-program (and their partners): exact, to the cent. */
export async function assertMoney(
  t: Test,
  sql: Sql,
  programId: number,
  partners: { partnerId: number; partnerProgramId: number }[],
): Promise<void> {
  t.same(await payoutOverlaps(sql, programId), [], 'no commission in two payouts or paid twice');
  for (const p of partners) {
    const m = await moneyOfPartnerProgram(sql, p.partnerProgramId);
    t.equal(
      m.balance,
      m.ledger,
      `partner-program ${p.partnerProgramId}: balance = sum of its ledger entries`,
    );
    t.equal(
      m.paid + m.balance,
      m.earned - m.deducted,
      `partner-program ${p.partnerProgramId}: paid ${m.paid} + balance ${m.balance} = earned ${m.earned} - deducted ${m.deducted}`,
    );
    const pm = await moneyOfPartner(sql, p.partnerId);
    t.equal(pm.balance, pm.ledger, `partner ${p.partnerId}: balance = sum of its ledger entries`);
    t.equal(
      pm.paid + pm.balance,
      pm.earned - pm.deducted,
      `partner ${p.partnerId}: paid + balance = earned - deducted`,
    );
  }
}
