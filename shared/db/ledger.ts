// The balance ledger's writes (ledger worker and mark-paid): a chunk of movements in the caller's
// transaction, each entry_key once, partners then partner_programs locked in id order. See docs/pipeline.md.
import type { Tx } from './sql.ts';
import type { LedgerEffect } from '../contracts/commands.ts';
import { movement } from '../domain/ledger.ts';

export interface ApplyLedgerResult {
  /** Entries inserted by this call. */
  applied: number;
  /** Effects skipped because their entry_key was already in the ledger or earlier in the chunk. */
  duplicates: number;
}

/**
 * A ledger effect that refers to rows that do not exist or do not belong together. It carries a SQLSTATE of
 * class 23 so that the ledger step's decision (`valuesRejectedArePoison`) treats it like the constraint
 * violation it stands for: the message is dead-lettered, not retried.
 */
export class LedgerEntryRejectedError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = 'LedgerEntryRejectedError';
    this.code = code;
  }
}

export interface LedgerRow {
  entry_key: string;
  kind: LedgerEffect['kind'];
  partner_id: number;
  partner_program_id: number;
  commission_id: number;
  requested_cents: string;
  partner_cents: string;
  program_cents: string;
}

const ENTRY_COLUMNS = [
  'entry_key',
  'kind',
  'partner_id',
  'partner_program_id',
  'commission_id',
  'requested_cents',
  'partner_cents',
  'program_cents',
] as const;

/** 8 columns × 2,000 rows stays well under Postgres's 65,534 parameters per statement. */
const ROWS_PER_STATEMENT = 2000;

const ascending = (ids: number[]): number[] => [...new Set(ids)].sort((a, b) => a - b);

/**
 * The step's work inside a caller's transaction (mark-paid commits its status change together with its
 * entry). Same locks in the same order as the worker, so the two compose.
 */
export async function applyLedgerEntries(tx: Tx, effects: LedgerEffect[]): Promise<ApplyLedgerResult> {
  if (effects.length === 0) return { applied: 0, duplicates: 0 };
  const partners = await lockPartners(tx, ascending(effects.map((e) => e.partner_id)));
  const programs = await lockPartnerPrograms(tx, ascending(effects.map((e) => e.partner_program_id)));

  const keys = [...new Set(effects.map((e) => e.entry_key))];
  const seen = new Set(
    (
      await tx<{ entry_key: string }[]>`
        select entry_key from ledger_entries where entry_key = any(${keys}::text[])`
    ).map((r) => r.entry_key),
  );

  const rows: LedgerRow[] = [];
  const touchedPartners = new Set<number>();
  const touchedPrograms = new Set<number>();
  for (const e of effects) {
    if (seen.has(e.entry_key)) continue;
    seen.add(e.entry_key);
    const partnerBalance = partners.get(e.partner_id);
    if (partnerBalance === undefined) {
      throw new LedgerEntryRejectedError(`partner ${e.partner_id} does not exist`, '23503');
    }
    const pp = programs.get(e.partner_program_id);
    if (pp === undefined) {
      throw new LedgerEntryRejectedError(`partner_program ${e.partner_program_id} does not exist`, '23503');
    }
    if (pp.partnerId !== e.partner_id) {
      throw new LedgerEntryRejectedError(
        `partner_program ${e.partner_program_id} belongs to partner ${pp.partnerId}, not ${e.partner_id}`,
        '23514',
      );
    }
    const amount = BigInt(e.amount_cents);
    const partnerCents = movement(partnerBalance, amount, e.clamp_at_zero);
    const programCents = movement(pp.balance, amount, e.clamp_at_zero);
    partners.set(e.partner_id, partnerBalance + partnerCents);
    pp.balance += programCents;
    touchedPartners.add(e.partner_id);
    touchedPrograms.add(e.partner_program_id);
    rows.push({
      entry_key: e.entry_key,
      kind: e.kind,
      partner_id: e.partner_id,
      partner_program_id: e.partner_program_id,
      commission_id: e.commission_id,
      requested_cents: amount.toString(),
      partner_cents: partnerCents.toString(),
      program_cents: programCents.toString(),
    });
  }
  if (rows.length === 0) return { applied: 0, duplicates: effects.length };

  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await tx`insert into ledger_entries ${tx(rows.slice(i, i + ROWS_PER_STATEMENT), ...ENTRY_COLUMNS)}`;
  }
  const partnerIds = ascending([...touchedPartners]);
  await tx`
    update partners p set balance_cents = v.balance
    from unnest(${partnerIds}::bigint[], ${partnerIds.map((id) => partners.get(id)!.toString())}::bigint[])
      as v(id, balance)
    where p.id = v.id`;
  const programIds = ascending([...touchedPrograms]);
  await tx`
    update partner_programs pp set balance_cents = v.balance
    from unnest(${programIds}::bigint[], ${programIds.map((id) => programs.get(id)!.balance.toString())}::bigint[])
      as v(id, balance)
    where pp.id = v.id`;
  return { applied: rows.length, duplicates: effects.length - rows.length };
}

// FOR NO KEY UPDATE (what an UPDATE of balance_cents takes), not FOR UPDATE: commission inserts in the
// attribution worker hold FOR KEY SHARE on these rows through their foreign keys, and FOR UPDATE would make
// the ledger and the attribution worker wait for each other's commits.
async function lockPartners(tx: Tx, ids: number[]): Promise<Map<number, bigint>> {
  const rows = await tx<{ id: string; balance_cents: string }[]>`
    select id, balance_cents from partners where id = any(${ids}::bigint[]) order by id for no key update`;
  return new Map(rows.map((r) => [Number(r.id), BigInt(r.balance_cents)]));
}

async function lockPartnerPrograms(
  tx: Tx,
  ids: number[],
): Promise<Map<number, { partnerId: number; balance: bigint }>> {
  const rows = await tx<{ id: string; partner_id: string; balance_cents: string }[]>`
    select id, partner_id, balance_cents from partner_programs
    where id = any(${ids}::bigint[]) order by id for no key update`;
  return new Map(
    rows.map((r) => [Number(r.id), { partnerId: Number(r.partner_id), balance: BigInt(r.balance_cents) }]),
  );
}
