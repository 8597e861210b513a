// The attribution decision for one sale whose customer was looked up: a refusal (the 400's text), or who
// earns what. Pure: the cookie window, the policy's one-time / recurring months and product rules.
import {
  commissionAmount,
  recurrenceBlocks,
  storedPolicy,
} from '../../../shared/domain/commission-policy.ts';

import type { CustomerKeyRow } from '../../../shared/pipeline/breakdown.ts';

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
}

export function attribute(
  sale: SaleFacts,
  program: { commission: unknown; cookie_window_days: number },
  found: { row: CustomerRow; via: Via } | null,
  pp: { partner_id: string | null } | undefined,
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

  // A stored policy that no longer parses earns the default, as it always has.
  const policy = storedPolicy(program.commission);
  const saleAt = new Date(sale.ts);
  let noCommission: string | null = null;
  // Only a customer matched by click_id while still in `click` status is bound to the cookie window.
  if (via === 'click_id' && customer.customer_status === 'click') {
    const clickedAt = customer.last_click_at?.getTime() ?? 0;
    if (saleAt.getTime() - clickedAt > program.cookie_window_days * DAY_MS)
      noCommission = 'Attribution window expired';
  }
  noCommission ??= recurrenceBlocks(policy, customer.first_commission_at, saleAt);
  const amount = noCommission ? 0 : commissionAmount(policy, sale.amount_cents, sale.product_id);
  if (!noCommission && amount === 0) noCommission = 'The commission policy gives no commission for this sale';
  return { customer, partnerId: pp.partner_id, amount, noCommission };
}
