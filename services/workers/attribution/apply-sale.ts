// The attribution and commission step (spec 4.3, CONTRACT "Tracking decisions" and commission policy).
// In one transaction: global transaction_id uniqueness, customer resolution (customer_key, then click_id),
// the attribution window, the program's commission policy, the sale, the commission, the customer's
// conversion, the daily rollup, and the ledger effect to publish after commit.
import type { Tx } from '../../../shared/db.ts';
import type { SaleCommand, LedgerEffect } from '../../../shared/commands.ts';
import { parseCommand } from '../../../shared/commands.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../../shared/command-handler.ts';
import {
  DEFAULT_POLICY,
  commissionAmount,
  parsePolicy,
  recurrenceBlocks,
} from '../../../shared/commission-policy.ts';
import { parseClickId, snowflakeTime } from '../../../shared/ids.ts';

export const DUPLICATE_SALE = 'Duplicate transaction_id. This sale has already been recorded.';
const DAY_MS = 86_400_000;

interface CustomerRow {
  id: string;
  program_id: string;
  partner_id: string | null;
  partner_program_id: string | null;
  customer_status: string;
  last_click_at: Date | null;
  first_purchase_date: Date | null;
  first_commission_at: Date | null;
}

const duplicate = (programId: number): Applied => ({
  programId,
  statusCode: 409,
  body: { error: DUPLICATE_SALE, message: DUPLICATE_SALE, statusCode: 409 },
});
const bad = (programId: number, error: string): Applied => ({ programId, statusCode: 400, body: { error } });

export interface SaleApplierOptions {
  /** How long a sale waits for a click minted moments ago that the click pipeline has not stored yet. */
  recentClickWaitMs: number;
}

export function createSaleApplier(
  opts: SaleApplierOptions = { recentClickWaitMs: 10_000 },
): CommandApplier<SaleCommand> {
  return {
    kind: 'sale',
    parse: (bytes) => parseCommand<SaleCommand>(bytes, 'sale'),
    apply: (tx, cmd, ctx) => applySale(tx, cmd, ctx, opts),
  };
}

async function findCustomer(
  tx: Tx,
  cmd: SaleCommand,
): Promise<{ row: CustomerRow; via: 'customer_key' | 'click_id' } | null> {
  if (cmd.customer_key !== null) {
    const [row] = await tx<CustomerRow[]>`
      select id, program_id, partner_id, partner_program_id, customer_status, last_click_at, first_purchase_date,
             first_commission_at
      from customers where program_id = ${cmd.program_id} and customer_key = ${cmd.customer_key} for no key update`;
    if (row) return { row, via: 'customer_key' };
  }
  if (cmd.click_id !== null) {
    const [row] = await tx<CustomerRow[]>`
      select id, program_id, partner_id, partner_program_id, customer_status, last_click_at, first_purchase_date,
             first_commission_at
      from customers where click_id = ${cmd.click_id} for no key update`;
    if (row) return { row, via: 'click_id' };
  }
  return null;
}

async function applySale(
  tx: Tx,
  cmd: SaleCommand,
  ctx: ApplyContext,
  opts: SaleApplierOptions,
): Promise<Applied> {
  type ProgramRow = { id: string; commission: unknown; cookie_window_days: number; deleted: boolean };
  const memoKey = `program:${cmd.program_id}`;
  let program = ctx.memo.get(memoKey) as ProgramRow | undefined;
  if (!program) {
    [program] = await tx<ProgramRow[]>`
      select id, commission, cookie_window_days, deleted_at is not null as deleted from programs where id = ${cmd.program_id}`;
    if (program) ctx.memo.set(memoKey, program);
  }
  if (!program || program.deleted)
    return { programId: cmd.program_id, statusCode: 401, body: { error: 'Invalid tracking token' } };
  const saleAt = new Date(cmd.ts);

  const insertSale = async (c: {
    customerId: string | null;
    partnerId: string | null;
    ppId: string | null;
  }) => {
    const [row] = await tx<{ id: string }[]>`
      insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, click_id, customer_key,
                         transaction_id, amount_cents, currency, sale_type, payment_status, is_recurring,
                         subscription_id, subscription_interval, product_id, line_items, is_test, sale_date)
      values (${cmd.request_id}, ${cmd.program_id}, ${c.customerId}, ${c.partnerId}, ${c.ppId}, ${cmd.click_id},
              ${cmd.customer_key}, ${cmd.transaction_id}, ${cmd.amount_cents}, ${cmd.currency}, ${cmd.sale_type},
              'paid', ${cmd.is_recurring}, ${cmd.subscription_id}, ${cmd.subscription_interval}, ${cmd.product_id},
              ${cmd.line_items === null ? null : tx.json(cmd.line_items as never)}, ${cmd.is_test}, ${saleAt})
      on conflict (transaction_id) do nothing
      returning id`;
    return row ? Number(row.id) : null;
  };

  if (cmd.is_test) {
    // Test mode: an is_test sale, nothing attributed, no commission, balance or metric.
    const saleId = await insertSale({ customerId: null, partnerId: null, ppId: null });
    if (saleId === null) return duplicate(cmd.program_id);
    return {
      programId: cmd.program_id,
      statusCode: 200,
      body: {
        success: true,
        message: 'Test sale recorded',
        data: { eventId: String(saleId), programId: cmd.program_id, test_mode: true },
      },
    };
  }

  // Duplicate detection is global (all programs) and comes before anything else.
  const [dup] = await tx`select 1 from sales where transaction_id = ${cmd.transaction_id}`;
  if (dup) return duplicate(cmd.program_id);

  let found = await findCustomer(tx, cmd);
  if (!found && cmd.click_id !== null) {
    // A sale sent right after its click's 200 may overtake the click pipeline: wait, bounded, for a click
    // id minted moments ago. Statements in READ COMMITTED see each new commit; no lock is held yet.
    const parsed = parseClickId(cmd.click_id);
    const mintedAt = parsed ? snowflakeTime(BigInt(parsed.id)) : 0;
    while (!found && Date.now() - mintedAt < opts.recentClickWaitMs) {
      await new Promise((r) => setTimeout(r, 50));
      found = await findCustomer(tx, cmd);
    }
  }
  if (!found) return bad(cmd.program_id, 'Customer not found. Provide customer_key or click_id.');
  const { row: customer, via } = found;
  if (Number(customer.program_id) !== cmd.program_id || customer.partner_id === null) {
    return bad(cmd.program_id, 'No affiliate attribution found for this customer in this program');
  }
  if (customer.partner_program_id === null) {
    return bad(cmd.program_id, 'No partner-program relationship found for this customer');
  }
  const [pp] = await tx<{ partner_id: string }[]>`
    select partner_id from partner_programs where id = ${customer.partner_program_id}`;
  if (!pp) return bad(cmd.program_id, 'No partner-program relationship found for this customer');
  if (pp.partner_id === null) return bad(cmd.program_id, 'partnerId required to create commission');

  const parsedPolicy = parsePolicy(program.commission);
  const policy = typeof parsedPolicy === 'string' ? DEFAULT_POLICY : parsedPolicy;
  let noCommission: string | null = null;
  // Only a customer matched by click_id while still in `click` status is bound to the cookie window.
  if (via === 'click_id' && customer.customer_status === 'click') {
    const clickedAt = customer.last_click_at?.getTime() ?? 0;
    if (saleAt.getTime() - clickedAt > program.cookie_window_days * DAY_MS)
      noCommission = 'Attribution window expired';
  }
  noCommission ??= recurrenceBlocks(policy, customer.first_commission_at, saleAt);
  const amount = noCommission ? 0 : commissionAmount(policy, cmd.amount_cents, cmd.product_id);
  if (!noCommission && amount === 0) noCommission = 'The commission policy gives no commission for this sale';

  const saleId = await insertSale({
    customerId: customer.id,
    partnerId: customer.partner_id,
    ppId: customer.partner_program_id,
  });
  if (saleId === null) return duplicate(cmd.program_id);

  const firstPurchase = customer.first_purchase_date === null;
  await tx`
    update customers set
      customer_status = case when customer_status in ('click', 'lead') then 'conversion' else customer_status end,
      first_purchase_date = coalesce(first_purchase_date, ${saleAt}),
      updated_at = now()
    where id = ${customer.id}`;
  ctx.rollups.add(cmd.program_id, cmd.ts, {
    sales: 1,
    revenue_cents: cmd.amount_cents,
    conversions: firstPurchase ? 1 : 0,
  });

  if (noCommission) {
    return {
      programId: cmd.program_id,
      statusCode: 200,
      body: { success: true, sale_id: saleId, commission_id: null, message: noCommission },
    };
  }

  // The sale stands even if the commission cannot be created (spec: the transaction_id stays consumed). On
  // the optimistic pass a failure here aborts the chunk, which is then applied carefully, with this savepoint.
  const createCommission = async (sp: Tx) => {
    const [c] = await sp<{ id: string }[]>`
        insert into commissions (sale_id, program_id, partner_id, partner_program_id, customer_id, status,
                                 amount_cents, currency)
        values (${saleId}, ${cmd.program_id}, ${pp.partner_id}, ${customer.partner_program_id}, ${customer.id},
                'pending', ${amount}, ${cmd.currency})
        returning id`;
    await sp`update customers set first_commission_at = coalesce(first_commission_at, ${saleAt}) where id = ${customer.id}`;
    return Number(c!.id);
  };
  let commissionId: number;
  if (ctx.careful) {
    try {
      commissionId = await tx.savepoint(createCommission);
    } catch {
      return { programId: cmd.program_id, statusCode: 500, body: { error: 'Failed to create commission' } };
    }
  } else {
    commissionId = await createCommission(tx);
  }
  ctx.rollups.add(cmd.program_id, cmd.ts, { commission_cents: amount });
  const ledger: LedgerEffect = {
    topic: 'ledger',
    entry_key: `commission:${commissionId}:created`,
    kind: 'commission_created',
    partner_id: Number(pp.partner_id),
    partner_program_id: Number(customer.partner_program_id),
    commission_id: commissionId,
    amount_cents: amount,
    clamp_at_zero: true,
  };
  return {
    programId: cmd.program_id,
    statusCode: 200,
    body: {
      success: true,
      sale_id: saleId,
      commission_id: commissionId,
      message: 'Sale recorded and commission created',
    },
    effects: [ledger],
  };
}
