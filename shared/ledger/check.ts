// The ledger against what it keeps (ARCHITECTURE invariant 4): every commission has its credit, and each
// partner's and partner-program's balance equals the sum of its column over its entries. Reads only; what
// `npm run chaos` reports once the load stopped and the pipeline drained (scripts/lib/chaos/account.ts).
import type { Sql, Tx } from '../db/sql.ts';

type Db = Sql | Tx;

/** The program's commissions without their `commission_created` entry (not applied yet, or lost). */
export async function commissionsWithoutCredit(db: Db, programId: number): Promise<{ id: string }[]> {
  return db<{ id: string }[]>`
    select c.id from commissions c where c.program_id = ${programId}
    and not exists (select 1 from ledger_entries e where e.commission_id = c.id and e.kind = 'commission_created')`;
}

/**
 * Each balance of the program's partners (all their programs) and partner-programs that is not the sum of
 * its entries, one line each; none when the ledger holds.
 */
export async function balanceDifferences(db: Db, programId: number): Promise<string[]> {
  const partners = await db<{ id: string; balance: string; sum: string }[]>`
    select p.id, p.balance_cents::text as balance,
           coalesce((select sum(e.partner_cents) from ledger_entries e where e.partner_id = p.id), 0)::text as sum
    from partners p where p.id in (select partner_id from partner_programs where program_id = ${programId})`;
  const programs = await db<{ id: string; balance: string; sum: string }[]>`
    select pp.id, pp.balance_cents::text as balance,
           coalesce((select sum(e.program_cents) from ledger_entries e where e.partner_program_id = pp.id), 0)::text as sum
    from partner_programs pp where pp.program_id = ${programId}`;
  return [
    ...partners
      .filter((p) => p.balance !== p.sum)
      .map((p) => `partner ${p.id}: balance ${p.balance}, ledger ${p.sum}`),
    ...programs
      .filter((p) => p.balance !== p.sum)
      .map((p) => `partner-program ${p.id}: balance ${p.balance}, ledger ${p.sum}`),
  ];
}
