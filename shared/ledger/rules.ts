// The balance rule (spec 3): a credit is applied in full. A deduction of a commission that had not been
// paid (`clamp_at_zero`) stops at zero and takes nothing from what is at or below zero; a deduction of a paid
// commission is applied in full and may leave a balance negative. What a clamped deduction stops at is its
// own commission's room (its credit less its earlier deductions, dal.ts `clampRooms`), not
// the whole balance, so that a refund never forgives a clawback still owed (docs/payouts.md "Clawbacks").

/**
 * What one movement does (bigint cents), given the room it may take from: a credit in full; a clamped
 * deduction at most down to zero and nothing from a room at or below zero; an unclamped deduction in full.
 */
export function movement(room: bigint, amount: bigint, clampAtZero: boolean): bigint {
  if (amount >= 0n || !clampAtZero) return amount;
  if (room <= 0n) return 0n;
  return -amount > room ? -room : amount;
}
