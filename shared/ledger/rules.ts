// The balance ledger's rules, pure: the keys of a commission's own entries and the order they are applied in
// (invariant 11), and how much a movement moves a balance. A movement itself (LedgerEffect) is the message
// of the ledger topic, a contract (shared/contracts/commands.ts, beside the parser of the effect topics).
//
// The balance rule (spec 3): a credit is applied in full. A deduction of a commission that had not been
// paid (`clamp_at_zero`) stops at zero and takes nothing from what is at or below zero; a deduction of a paid
// commission is applied in full and may leave a balance negative. What a clamped deduction stops at is its
// own commission's room (its credit less its earlier deductions, dal.ts `clampRooms`), not
// the whole balance, so that a refund never forgives a clawback still owed (docs/payouts.md "Clawbacks").
import type { LedgerEffect } from '../contracts/commands.ts';

/**
 * What one movement does (bigint cents), given the room it may take from: a credit in full; a clamped
 * deduction at most down to zero and nothing from a room at or below zero; an unclamped deduction in full.
 */
export function movement(room: bigint, amount: bigint, clampAtZero: boolean): bigint {
  if (amount >= 0n || !clampAtZero) return amount;
  if (room <= 0n) return 0n;
  return -amount > room ? -room : amount;
}

/** The entry_key of a commission's own ledger entries: its credit, its payment, its refund deduction. */
export function commissionEntryKey(commissionId: number, step: 'created' | 'paid' | 'refund'): string {
  return `commission:${commissionId}:${step}`;
}

/**
 * The entries that must be in the ledger before this one is applied (ARCHITECTURE invariant 11): a
 * commission's refund deduction comes after its credit, and the deduction of a paid commission (not clamped)
 * also after the payment. The payment itself has none: it is never clamped, so it moves the balances by the
 * same amount whenever it lands, and mark-paid applies it in its own transaction (the advertiser's action
 * stands at once). Only a commission's own entries, named by `commissionEntryKey`, have an order; any other
 * movement has no prerequisite.
 */
export function ledgerPrerequisites(e: LedgerEffect): string[] {
  const id = e.commission_id;
  if (id === null) return [];
  if (
    (e.kind === 'commission_reversed' || e.kind === 'commission_refunded') &&
    e.entry_key === commissionEntryKey(id, 'refund')
  ) {
    const credit = commissionEntryKey(id, 'created');
    return e.clamp_at_zero ? [credit] : [credit, commissionEntryKey(id, 'paid')];
  }
  return [];
}
