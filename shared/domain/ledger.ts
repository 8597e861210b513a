// The balance rule (spec 3): a credit is applied in full. A deduction of a commission that had not been
// paid (`clamp_at_zero`) stops at zero and takes nothing from a balance already at or below zero; a
// deduction of a paid commission is applied in full and may leave a balance negative.

/**
 * What one movement does to one balance (bigint cents): a credit in full; a clamped deduction at most down
 * to zero and nothing from a balance at or below zero; an unclamped deduction in full.
 */
export function movement(balance: bigint, amount: bigint, clampAtZero: boolean): bigint {
  if (amount >= 0n || !clampAtZero) return amount;
  if (balance <= 0n) return 0n;
  return -amount > balance ? -balance : amount;
}
