// A sale command as the ingress produces it (shared/contracts/commands.ts), for the tests and the
// benchmark (bench:sales) that hand commands to the sale applier or to Kafka directly.
import type { SaleCommand } from '../../../shared/contracts/commands.ts';

/**
 * A sale command: a live one-time payment, now, in the program's currency, naming no customer, click,
 * product or code; `fields` gives its ids and amount and changes any of the rest.
 */
export function saleCommand(
  fields: Pick<SaleCommand, 'request_id' | 'program_id' | 'transaction_id' | 'amount_cents'> &
    Partial<SaleCommand>,
): SaleCommand {
  return {
    v: 1,
    type: 'sale',
    ts: Date.now(),
    currency: null,
    customer_key: null,
    click_id: null,
    sale_type: 'payment',
    line_items: null,
    is_recurring: false,
    subscription_id: null,
    subscription_interval: null,
    product_id: null,
    is_test: false,
    ...fields,
  };
}
