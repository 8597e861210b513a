// What a commission policy pays (CONTRACT "Programs"; its shape and check: policy-schema.ts): percentage or
// flat, per-product overrides, and one_time / recurring (months, or lifetime when months is null). Amounts are integer cents; a percentage
// commission is round half up of amount × percent / 100, computed exactly in integers.
import { mulDivRoundHalfUp } from './money.ts';
import { parsePolicy, policyError } from './policy-schema.ts';
import type { CommissionPolicy, Rate } from './policy-schema.ts';

export type { CommissionPolicy, Rate };
export { parsePolicy, policyError };

export const DEFAULT_POLICY: CommissionPolicy = {
  type: 'percentage',
  percent: 20,
  amount_cents: null,
  recurring: { mode: 'recurring', months: null, first: null },
  product_rules: [],
};

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

/**
 * A stored policy as every reader uses it: normalised; one that no longer parses (written by hand, or by a
 * version that allowed it) is the default, which is what its sales have always earned.
 */
export function storedPolicy(v: unknown): CommissionPolicy {
  // A row's policy is read by every sale of its chunk: parsed once per object (never changed by a reader).
  const hit = v !== null && typeof v === 'object' ? parsed.get(v) : undefined;
  if (hit) return hit;
  const p = parsePolicy(v);
  const policy = typeof p === 'string' ? DEFAULT_POLICY : p;
  if (v !== null && typeof v === 'object') parsed.set(v, policy);
  return policy;
}
const parsed = new WeakMap<object, CommissionPolicy>();

// ---- what prices a sale (CONTRACT part four "What a partner earns"; docs/rewards.md) ----

/**
 * Which rule priced a commission: the partner's own policy, its group's, a product rule, a stepped rate, a
 * bonus; or another service, from which the commission was imported with its amount (docs/importing.md).
 */
export type RuleSource = 'override' | 'group' | 'product' | 'first_period' | 'bonus' | 'imported';

/** What a commission carries of the rule that priced it. */
export interface PricedRule extends Rate {
  source: RuleSource;
}

/** The policies a sale of a partner may be priced by: its own, its group's (null: the program's), the program's. */
export interface Terms {
  override: CommissionPolicy | null;
  group: CommissionPolicy | null;
  program: CommissionPolicy;
}

/** The partner–customer pair's history: how many commissions it earned, and when the first was. */
export interface PairHistory {
  commissions: number;
  firstCommissionAt: Date | null;
}

export type Price = { noCommission: string } | { amount: number; rule: PricedRule };

const rateOf = (r: Rate): Rate => ({ type: r.type, percent: r.percent, amount_cents: r.amount_cents });

function amountOf(rate: Rate, amountCents: number): number {
  if (rate.type === 'flat') return rate.amount_cents ?? 0;
  return mulDivRoundHalfUp(amountCents, Math.round((rate.percent ?? 0) * 10_000), 1_000_000);
}

/**
 * The one pricing rule, pure: the partner's override, else its group's policy, else the program's; inside
 * the policy applied, a product rule for the sale's product wins, then the stepped rate (`recurring.first`)
 * for the pair's first `count` commissions, then the policy's own rate; the policy's recurrence (one-time,
 * months from the pair's first commission) may give nothing. A zero amount is no commission.
 */
export function priceSale(
  terms: Terms,
  pair: PairHistory,
  sale: { amountCents: number; productId: string | null; at: Date },
): Price {
  const policy = terms.override ?? terms.group ?? terms.program;
  const source: RuleSource = terms.override ? 'override' : 'group';
  const blocked = recurrenceBlocks(policy, pair.firstCommissionAt, sale.at);
  if (blocked) return { noCommission: blocked };
  const product =
    sale.productId === null ? undefined : policy.product_rules.find((r) => r.product_id === sale.productId);
  const first = policy.recurring.first;
  const rule: PricedRule = product
    ? { source: 'product', ...rateOf(product) }
    : first && pair.commissions < first.count
      ? { source: 'first_period', ...rateOf(first) }
      : { source, ...rateOf(policy) };
  const amount = amountOf(rule, sale.amountCents);
  if (amount === 0) return { noCommission: 'The commission policy gives no commission for this sale' };
  return { amount, rule };
}
