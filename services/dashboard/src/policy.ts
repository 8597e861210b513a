// A commission policy in the dashboard's words (the portal says it in a partner's: portal/parts.tsx): one
// line for its rate and recurrence, with the stepped rate of a customer's first payments, and its product
// rules. Programs, groups and partners' own policies all show a policy this way.
import { money } from './format.ts';
import type { CommissionPolicy, Rate } from './api.ts';

/** "20%" or "€5.00 flat". */
export function rateText(r: Rate, currency: string): string {
  return r.type === 'percentage' ? `${r.percent ?? 0}%` : `${money(r.amount_cents ?? 0, currency)} flat`;
}

/** "20% (recurring, lifetime)", "40% for the first 3 payments, then 20% (recurring for 12 months)". */
export function policyText(c: CommissionPolicy, currency: string): string {
  const rec =
    c.recurring.mode === 'one_time'
      ? 'first sale only'
      : c.recurring.months === null
        ? 'recurring, lifetime'
        : `recurring for ${c.recurring.months} months`;
  const first = c.recurring.first;
  const stepped = first
    ? `${rateText(first, currency)} for the first ${first.count === 1 ? 'payment' : `${first.count} payments`}, then `
    : '';
  return `${stepped}${rateText(c, currency)} (${rec})`;
}

/** "annual: 30%; lifetime: €90.00 flat", or '' without product rules. */
export function productRulesText(c: CommissionPolicy, currency: string): string {
  return c.product_rules.map((r) => `${r.product_id}: ${rateText(r, currency)}`).join('; ');
}
