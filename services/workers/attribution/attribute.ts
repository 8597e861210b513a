// The attribution decision for one sale whose customer was looked up: a refusal (the 400's text), or who
// earns what. Pure: the cookie window, then the one pricing rule (shared/domain/commission-policy.ts
// `priceSale`: the partner's override, its group's policy, the program's; product rules; recurrence).
import { priceSale, storedPolicy } from '../../../shared/domain/commission-policy.ts';
import type { CommissionPolicy, PairHistory, PricedRule } from '../../../shared/domain/commission-policy.ts';

import type { CustomerKeyRow } from '../../../shared/rollups/rules.ts';

const DAY_MS = 86_400_000;
export const NOT_FOUND = 'Customer not found. Provide customer_key or click_id.';

export interface CustomerRow extends CustomerKeyRow {
  id: string;
  program_id: string;
  partner_id: string | null;
  partner_program_id: string | null;
  customer_status: string;
  last_click_at: Date | null;
  first_purchase_date: Date | null;
  first_commission_at: Date | null;
}

/**
 * How the sale found its customer: only a click_id match can be bound by the cookie window; 'code': the
 * sale's partner code owns the customer (by-code.ts).
 */
export type Via = 'customer_key' | 'click_id' | 'code';

export interface SaleFacts {
  program_id: number;
  amount_cents: number;
  product_id: string | null;
  /** The sale's time (ms). */
  ts: number;
}

/** A sale that passed every check: what to write for it. */
export interface Attribution {
  customer: CustomerRow;
  partnerId: string;
  amount: number;
  /** Why the sale earns no commission, or null when it earns `amount`. */
  noCommission: string | null;
  /** The rule that priced it (null: no commission). */
  rule: PricedRule | null;
  /** The group whose terms applied (null: the partner is in none, rows from before groups). */
  groupId: number | null;
}

/** The customer's partner-program as the decision reads it. */
export interface PartnerProgramRow {
  partner_id: string | null;
  /** Its group (absent: none known). */
  group_id?: string | null;
  /** Its own policy as stored (null or absent: none). */
  commission_override?: unknown;
}

/** Where the decision reads what it cannot read from the rows: the group's policy, the pair's history. */
export interface PricingContext {
  /** The group whose terms apply to this customer of the partner (its group, or one a tier rule pinned). */
  group(pp: PartnerProgramRow, customer: CustomerRow): { id: number; policy: CommissionPolicy | null } | null;
  /** The partner–customer pair's commissions so far. */
  pair(pp: PartnerProgramRow, customer: CustomerRow): PairHistory;
}

/** Without groups and pairs: the customer's first commission is the pair's (one-time, months). */
const PLAIN: PricingContext = {
  group: () => null,
  pair: (_pp, c) => ({
    commissions: c.first_commission_at === null ? 0 : 1,
    firstCommissionAt: c.first_commission_at,
  }),
};

export function attribute(
  sale: SaleFacts,
  program: { commission: unknown; cookie_window_days: number },
  found: { row: CustomerRow; via: Via } | null,
  pp: PartnerProgramRow | undefined,
  pricing: PricingContext = PLAIN,
): { refused: string } | Attribution {
  if (!found) return { refused: NOT_FOUND };
  const { row: customer, via } = found;
  if (Number(customer.program_id) !== sale.program_id || customer.partner_id === null) {
    return { refused: 'No affiliate attribution found for this customer in this program' };
  }
  if (customer.partner_program_id === null || !pp) {
    return { refused: 'No partner-program relationship found for this customer' };
  }
  if (pp.partner_id === null) return { refused: 'partnerId required to create commission' };

  const saleAt = new Date(sale.ts);
  const group = pricing.group(pp, customer);
  const groupId = group?.id ?? null;
  // Only a customer matched by click_id while still in `click` status is bound to the cookie window.
  if (via === 'click_id' && customer.customer_status === 'click') {
    const clickedAt = customer.last_click_at?.getTime() ?? 0;
    if (saleAt.getTime() - clickedAt > program.cookie_window_days * DAY_MS) {
      const noCommission = 'Attribution window expired';
      return { customer, partnerId: pp.partner_id, amount: 0, noCommission, rule: null, groupId };
    }
  }
  // A stored policy that no longer parses earns the default, as it always has.
  const override = pp.commission_override ? storedPolicy(pp.commission_override) : null;
  const price = priceSale(
    { override, group: group?.policy ?? null, program: storedPolicy(program.commission) },
    pricing.pair(pp, customer),
    { amountCents: sale.amount_cents, productId: sale.product_id, at: saleAt },
  );
  if ('noCommission' in price) {
    return {
      customer,
      partnerId: pp.partner_id,
      amount: 0,
      noCommission: price.noCommission,
      rule: null,
      groupId,
    };
  }
  return {
    customer,
    partnerId: pp.partner_id,
    amount: price.amount,
    noCommission: null,
    rule: price.rule,
    groupId,
  };
}
