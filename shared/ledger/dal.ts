// The balance ledger's one writer (ledger worker, mark-paid, payouts, rejections, imports): the only
// statements that insert ledger entries or write a balance. A chunk of movements in the caller's
// transaction, each entry_key once, partners then partner_programs locked in id order, each commission's
// entries in causal order (an entry that arrives before one it must follow is held). The rules it applies
// are rules.ts. See docs/pipeline.md and docs/payouts.md.
import type { Tx } from '../db/sql.ts';
import type { LedgerEffect } from '../contracts/commands.ts';
import { ledgerPrerequisites, movement } from './rules.ts';

export interface ApplyLedgerResult {
  /** Entries inserted by this call (with those it released from holding). */
  applied: number;
  /** Effects skipped because their entry_key was already in the ledger, held, or earlier in the chunk. */
  duplicates: number;
  /** Effects held because an entry they must follow is not in the ledger yet (only when some were). */
  held?: number;
  /** Entries held earlier and applied by this call, now that what they waited for is in (only when some were). */
  released?: number;
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
  commission_id: number | null;
  payout_id: number | null;
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
  'payout_id',
  'requested_cents',
  'partner_cents',
  'program_cents',
] as const;

/** 9 columns × 2,000 rows stays well under Postgres's 65,534 parameters per statement. */
const ROWS_PER_STATEMENT = 2000;

const ascending = (ids: number[]): number[] => [...new Set(ids)].sort((a, b) => a - b);

/**
 * The step's work inside a caller's transaction (mark-paid commits its status change together with its
 * entry). Same locks in the same order as the worker, so the two compose.
 *
 * Causal order (ARCHITECTURE invariant 11): an entry whose prerequisites (`ledgerPrerequisites`: a
 * commission's credit before its payment and its deduction) are not all in the ledger is not applied but
 * held in `ledger_held`; the call that applies the last of them applies it right after, against the balances
 * that now include them. Holding and releasing happen under the partner's row lock (a commission's entries
 * all name the same partner and partner-program), so a held entry and its prerequisite cannot miss each other.
 */
export async function applyLedgerEntries(tx: Tx, effects: LedgerEffect[]): Promise<ApplyLedgerResult> {
  if (effects.length === 0) return { applied: 0, duplicates: 0 };
  const partners = await lockPartners(tx, ascending(effects.map((e) => e.partner_id)));
  const programs = await lockPartnerPrograms(tx, ascending(effects.map((e) => e.partner_program_id)));

  // Entries held earlier for the chunk's commissions, under the locks just taken (a held entry names the
  // same partner and partner-program as its commission's other entries; one that does not stays held).
  const commissionIds = [
    ...new Set(effects.flatMap((e) => (e.commission_id === null ? [] : [e.commission_id]))),
  ];
  const heldRows = await tx<{ entry_key: string; effect: LedgerEffect }[]>`
    select entry_key, effect from ledger_held
    where commission_id = any(${commissionIds}::bigint[])
      and partner_id = any(${[...partners.keys()]}::bigint[])
      and partner_program_id = any(${[...programs.keys()]}::bigint[])
    order by held_at, entry_key`;
  const heldBefore = new Map(heldRows.map((r) => [r.entry_key, r.effect]));

  const keys = new Set<string>();
  for (const e of [...effects, ...heldBefore.values()]) {
    keys.add(e.entry_key);
    for (const k of ledgerPrerequisites(e)) keys.add(k);
  }
  const seen = new Set(
    (
      await tx<{ entry_key: string }[]>`
        select entry_key from ledger_entries where entry_key = any(${[...keys]}::text[])`
    ).map((r) => r.entry_key),
  );

  // What each clamped deduction may take: its commission's credit less the deductions before it
  // (`clampRoom`), read only when the chunk has such a deduction.
  const rooms = await clampRooms(tx, [...effects, ...heldBefore.values()]);

  const rows: LedgerRow[] = [];
  const touchedPartners = new Set<number>();
  const touchedPrograms = new Set<number>();
  /** Held, by this call or before, and not yet applied: entry_key → effect. */
  const waiting = new Map(heldBefore);
  const heldNow: LedgerEffect[] = [];
  const released: string[] = [];
  let duplicates = 0;

  const ready = (e: LedgerEffect) => ledgerPrerequisites(e).every((k) => seen.has(k));
  const apply = (e: LedgerEffect) => {
    const partnerBalance = partners.get(e.partner_id)!;
    const pp = programs.get(e.partner_program_id)!;
    const amount = BigInt(e.amount_cents);
    const room = e.commission_id === null ? undefined : rooms.get(e.commission_id);
    const partnerCents = movement(room?.partner ?? 0n, amount, e.clamp_at_zero);
    const programCents = movement(room?.program ?? 0n, amount, e.clamp_at_zero);
    if (room && e.kind !== 'commission_paid') {
      room.partner += partnerCents;
      room.program += programCents;
    }
    partners.set(e.partner_id, partnerBalance + partnerCents);
    pp.balance += programCents;
    touchedPartners.add(e.partner_id);
    touchedPrograms.add(e.partner_program_id);
    seen.add(e.entry_key);
    rows.push({
      entry_key: e.entry_key,
      kind: e.kind,
      partner_id: e.partner_id,
      partner_program_id: e.partner_program_id,
      commission_id: e.commission_id,
      payout_id: e.payout_id ?? null,
      requested_cents: amount.toString(),
      partner_cents: partnerCents.toString(),
      program_cents: programCents.toString(),
    });
  };
  /** Applies every waiting entry whose prerequisites are now in, until none is (a release may enable another). */
  const release = () => {
    for (let progress = true; progress;) {
      progress = false;
      for (const [key, e] of waiting) {
        if (!ready(e)) continue;
        waiting.delete(key);
        apply(e);
        if (heldBefore.has(key)) released.push(key);
        progress = true;
      }
    }
  };

  for (const e of effects) {
    if (seen.has(e.entry_key) || waiting.has(e.entry_key)) {
      duplicates++;
      continue;
    }
    checkRows(e, partners, programs);
    if (!ready(e)) {
      waiting.set(e.entry_key, e);
      heldNow.push(e);
      continue;
    }
    apply(e);
    release();
  }

  // Entries held by this call and released within it need no row.
  const stillHeld = heldNow.filter((e) => waiting.has(e.entry_key));
  if (stillHeld.length > 0) {
    await tx`
      insert into ledger_held (entry_key, commission_id, partner_id, partner_program_id, waiting_for, effect)
      select k, c, p, pp, array(select jsonb_array_elements_text(w::jsonb)), e::jsonb
      from unnest(${stillHeld.map((e) => e.entry_key)}::text[], ${stillHeld.map((e) => e.commission_id)}::bigint[],
                  ${stillHeld.map((e) => e.partner_id)}::bigint[], ${stillHeld.map((e) => e.partner_program_id)}::bigint[],
                  ${stillHeld.map((e) => JSON.stringify(ledgerPrerequisites(e).filter((k) => !seen.has(k))))}::text[],
                  ${stillHeld.map((e) => JSON.stringify(e))}::text[]) as v(k, c, p, pp, w, e)
      on conflict (entry_key) do nothing`;
  }
  if (released.length > 0) {
    await tx`delete from ledger_held where entry_key = any(${released}::text[])`;
  }
  const extra = {
    ...(stillHeld.length > 0 ? { held: stillHeld.length } : {}),
    ...(released.length > 0 ? { released: released.length } : {}),
  };
  if (rows.length === 0) return { applied: 0, duplicates, ...extra };

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
  return { applied: rows.length, duplicates, ...extra };
}

/**
 * The clamp's room (spec 3's balance rule, docs/payouts.md "Clawbacks"): a deduction of an unpaid commission
 * takes at most what that commission's own entries still hold, its credit less its earlier deductions
 * (payments not counted), and nothing once that is at or below zero. Never the rest of the balance: a
 * balance below the deduction means a clawback of a paid commission is still owed, and a refund of another
 * commission must not forgive it (what the partner was paid plus the balance would no longer equal what
 * they earned less deductions). With causal order (the credit first) and a deduction never larger than its
 * commission, a real refund is therefore deducted in full. Read for the commissions of the chunk's clamped
 * deductions only; the caller keeps the rooms current as it applies entries.
 */
async function clampRooms(
  tx: Tx,
  effects: LedgerEffect[],
): Promise<Map<number, { partner: bigint; program: bigint }>> {
  const ids = [
    ...new Set(
      effects.flatMap((e) =>
        e.clamp_at_zero && e.amount_cents < 0 && e.commission_id !== null ? [e.commission_id] : [],
      ),
    ),
  ];
  const rooms = new Map(ids.map((id) => [id, { partner: 0n, program: 0n }]));
  if (ids.length === 0) return rooms;
  const rows = await tx<{ commission_id: string; partner: string; program: string }[]>`
    select commission_id, sum(partner_cents)::text as partner, sum(program_cents)::text as program
    from ledger_entries
    where commission_id = any(${ids}::bigint[]) and kind <> 'commission_paid'
    group by commission_id`;
  for (const r of rows) {
    rooms.set(Number(r.commission_id), { partner: BigInt(r.partner), program: BigInt(r.program) });
  }
  return rooms;
}

/** The rows an effect names must exist and belong together (else it is poison, never held). */
function checkRows(
  e: LedgerEffect,
  partners: Map<number, bigint>,
  programs: Map<number, { partnerId: number; balance: bigint }>,
): void {
  if (!partners.has(e.partner_id)) {
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
