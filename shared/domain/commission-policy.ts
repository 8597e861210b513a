// A program's commission policy (CONTRACT "Programs"): percentage or flat, per-product overrides, and
// one_time / recurring (months, or lifetime when months is null). Amounts are integer cents; a percentage
// commission is round half up of amount × percent / 100, computed exactly in integers.
import { isPlainObject } from '../json.ts';
import { MAX_AMOUNT_CENTS, mulDivRoundHalfUp } from './money.ts';
import type { CommissionPolicy, Rate } from '../contracts/management.ts';

export type { CommissionPolicy, Rate };

export const DEFAULT_POLICY: CommissionPolicy = {
  type: 'percentage',
  percent: 20,
  amount_cents: null,
  recurring: { mode: 'recurring', months: null },
  product_rules: [],
};

/** Returns the policy, or a message saying what is wrong with it. */

export function parsePolicy(input: unknown): CommissionPolicy | string {
  if (!isPlainObject(input)) return 'commission must be an object';
  const rate = (o: Record<string, unknown>, where: string): Rate | string => {
    if (o.type === 'percentage') {
      const p = o.percent;
      if (typeof p !== 'number' || !(p >= 0 && p <= 100) || Math.round(p * 10_000) !== p * 10_000) {
        return `${where}percent must be a number from 0 to 100 (at most 4 decimals)`;
      }
      return { type: 'percentage', percent: p, amount_cents: null };
    }
    if (o.type === 'flat') {
      const a = o.amount_cents;
      if (!Number.isSafeInteger(a) || (a as number) < 0)
        return `${where}amount_cents must be a non-negative integer`;
      if ((a as number) > MAX_AMOUNT_CENTS) return `${where}amount_cents must be at most ${MAX_AMOUNT_CENTS}`;
      return { type: 'flat', percent: null, amount_cents: a as number };
    }
    return `${where}type must be 'percentage' or 'flat'`;
  };
  const base = rate(input, '');
  if (typeof base === 'string') return base;
  let recurring: CommissionPolicy['recurring'] = { mode: 'recurring', months: null };
  if (input.recurring !== undefined && input.recurring !== null) {
    const r = input.recurring;
    if (!isPlainObject(r)) return 'recurring must be an object';
    const mode = r.mode ?? 'recurring';
    if (mode !== 'one_time' && mode !== 'recurring')
      return "recurring.mode must be 'one_time' or 'recurring'";
    const months = r.months ?? null;
    if (months !== null && !(Number.isSafeInteger(months) && (months as number) > 0)) {
      return 'recurring.months must be a positive integer or null (lifetime)';
    }
    recurring = { mode, months: months as number | null };
  }
  const rules: CommissionPolicy['product_rules'] = [];
  if (input.product_rules !== undefined && input.product_rules !== null) {
    if (!Array.isArray(input.product_rules)) return 'product_rules must be an array';
    for (const [i, r] of input.product_rules.entries()) {
      if (!isPlainObject(r) || typeof r.product_id !== 'string' || r.product_id === '') {
        return `product_rules[${i}].product_id must be a string`;
      }
      const rr = rate(r, `product_rules[${i}].`);
      if (typeof rr === 'string') return rr;
      rules.push({ ...rr, product_id: r.product_id });
    }
  }
  return { ...base, recurring, product_rules: rules };
}

/** The commission in cents for a sale of `amountCents` (and product), before any attribution rule. */
export function commissionAmount(
  policy: CommissionPolicy,
  amountCents: number,
  productId: string | null,
): number {
  const rule = productId === null ? undefined : policy.product_rules.find((r) => r.product_id === productId);
  const rate: Rate = rule ?? policy;
  if (rate.type === 'flat') return rate.amount_cents ?? 0;
  // percent has at most 4 decimals: amount × (percent × 10^4) / (100 × 10^4), exactly.
  return mulDivRoundHalfUp(amountCents, Math.round((rate.percent ?? 0) * 10_000), 1_000_000);
}

/** Why a sale earns no commission under the policy's recurrence, or null when it earns one. */
export function recurrenceBlocks(
  policy: CommissionPolicy,
  firstCommissionAt: Date | null,
  saleAt: Date,
): string | null {
  if (firstCommissionAt === null) return null;
  if (policy.recurring.mode === 'one_time') return 'One-time commission already earned for this customer';
  const months = policy.recurring.months;
  if (months === null) return null;
  const end = new Date(firstCommissionAt);
  end.setUTCMonth(end.getUTCMonth() + months);
  return saleAt > end ? `Recurring commission period of ${months} months has ended` : null;
}
