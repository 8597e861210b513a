// The rows the sale step writes (apply-sale.ts decides them): each sale's row as decided, inserted with one
// statement for the chunk, and the customers' conversion and first purchase. SQL only, no rules.
import { boolArray } from '../../../shared/db/sql.ts';
import type { Tx } from '../../../shared/db/sql.ts';
import type { SaleCommand } from '../../../shared/contracts/commands.ts';
import type { DimensionKeys } from '../../../shared/rollups/rules.ts';

/** The sale's row, as the columns of the sales insert (both forms write the same values). */
export function saleRow(
  cmd: SaleCommand,
  c: { customerId: string | null; partnerId: string | null; ppId: string | null },
  code: { coupon_code: string | null; partner_code_id: string | null },
  keys: DimensionKeys | null,
) {
  return {
    request_id: cmd.request_id,
    program_id: cmd.program_id,
    customer_id: c.customerId,
    partner_id: c.partnerId,
    partner_program_id: c.ppId,
    click_id: cmd.click_id,
    customer_key: cmd.customer_key,
    transaction_id: cmd.transaction_id,
    amount_cents: cmd.amount_cents,
    currency: cmd.currency,
    sale_type: cmd.sale_type,
    is_recurring: cmd.is_recurring,
    subscription_id: cmd.subscription_id,
    subscription_interval: cmd.subscription_interval,
    product_id: cmd.product_id,
    line_items: cmd.line_items === null ? null : JSON.stringify(cmd.line_items),
    is_test: cmd.is_test,
    sale_date: new Date(cmd.ts).toISOString(),
    ...code,
    // The partner and link it counts under in the rollups (0025), as decided: a code that moves the
    // customer later (in this chunk or after) moves nothing counted before.
    partner_key: keys?.partner ?? null,
    link_key: keys?.link ?? null,
  };
}
export type SaleRow = ReturnType<typeof saleRow>;

/**
 * Inserts sales with one statement (an array per column, so the statement text and its plan do not
 * depend on the row count); returns the id of each inserted row by transaction_id. A transaction_id that is
 * already taken is skipped (`on conflict do nothing`), so it is missing from the result.
 */
export async function insertSales(tx: Tx, rows: SaleRow[]): Promise<Map<string, number>> {
  const col = <K extends keyof SaleRow>(k: K) => rows.map((r) => r[k]);
  const got = await tx<{ id: string; transaction_id: string }[]>`
    insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, click_id, customer_key,
                       transaction_id, amount_cents, currency, sale_type, payment_status, is_recurring,
                       subscription_id, subscription_interval, product_id, line_items, is_test, sale_date,
                       coupon_code, partner_code_id, partner_key, link_key)
    select r, p, c, pa, pp, ck, k, t, a, cur, st, 'paid', rec::boolean, sub, si, pr, li::jsonb, te::boolean, sd, cc, pc,
           pk, lk
    from unnest(${col('request_id')}::text[], ${col('program_id')}::bigint[], ${col('customer_id')}::bigint[],
                ${col('partner_id')}::bigint[], ${col('partner_program_id')}::bigint[], ${col('click_id')}::text[],
                ${col('customer_key')}::text[], ${col('transaction_id')}::text[], ${col('amount_cents')}::bigint[],
                ${col('currency')}::text[], ${col('sale_type')}::text[], ${boolArray(col('is_recurring'))}::text[],
                ${col('subscription_id')}::text[], ${col('subscription_interval')}::text[],
                ${col('product_id')}::text[], ${col('line_items')}::text[], ${boolArray(col('is_test'))}::text[],
                ${col('sale_date')}::timestamptz[], ${col('coupon_code')}::text[], ${col('partner_code_id')}::bigint[],
                ${col('partner_key')}::text[], ${col('link_key')}::text[])
      as v(r, p, c, pa, pp, ck, k, t, a, cur, st, rec, sub, si, pr, li, te, sd, cc, pc, pk, lk)
    on conflict (transaction_id) do nothing
    returning id, transaction_id`;
  return new Map(got.map((r) => [r.transaction_id, Number(r.id)]));
}

/**
 * A sale's effect on its customer: click or lead becomes conversion; first_purchase_date and (with a
 * commission) first_commission_at are set unless already set. `purchaseAt` / `commissionAt` are the times
 * of the customer's first sale / first commission in this statement's batch (null: none).
 */
export async function updateCustomers(
  tx: Tx,
  rows: { id: string; purchaseAt: string; commissionAt: string | null }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx`
    update customers c set
      customer_status = case when c.customer_status in ('click', 'lead') then 'conversion' else c.customer_status end,
      first_purchase_date = coalesce(c.first_purchase_date, v.fp),
      first_commission_at = coalesce(c.first_commission_at, v.fc),
      updated_at = now()
    from unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.purchaseAt)}::timestamptz[],
                ${rows.map((r) => r.commissionAt)}::timestamptz[]) as v(id, fp, fc)
    where c.id = v.id`;
}
