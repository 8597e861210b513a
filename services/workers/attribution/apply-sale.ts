// The attribution and commission step (spec 4.3, CONTRACT "Tracking decisions" and commission policy).
// In one transaction: global transaction_id uniqueness, customer resolution (customer_key, then click_id),
// the attribution window, the program's commission policy, the sale, the commission, the customer's
// conversion, the daily rollup, and the ledger effect to publish after commit.
//
// Two forms of one rule set:
// - `apply`, one command at a time (about nine statements): the careful pass, and the reference;
// - `applyBatch`, the optimistic pass over a whole chunk in a fixed number of statements, whatever its
//   size: read the programs, the transaction_ids already taken, the customers (locked, in id order) and
//   their partner-programs; decide every sale in message order against in-memory state (a customer's
//   second sale in the chunk sees its first); then insert the sales, the commissions and the customers'
//   new state with one multi-row statement each. Both forms share the decisions (`checkProgram`,
//   `attribute`, the answer builders), and a differential test holds them to the same answers and rows.
import type { Tx } from '../../../shared/db/sql.ts';
import type { SaleCommand, LedgerEffect } from '../../../shared/contracts/commands.ts';
import { parseCommand } from '../../../shared/contracts/commands.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../../shared/pipeline/command-handler.ts';
import { CarefulPassNeeded } from '../../../shared/pipeline/command-handler.ts';
import {
  DEFAULT_POLICY,
  commissionAmount,
  parsePolicy,
  recurrenceBlocks,
} from '../../../shared/domain/commission-policy.ts';
import { parseClickId, snowflakeTime } from '../../../shared/domain/ids.ts';

export const DUPLICATE_SALE = 'Duplicate transaction_id. This sale has already been recorded.';
const DAY_MS = 86_400_000;

interface ProgramRow {
  id: string;
  commission: unknown;
  cookie_window_days: number;
  deleted: boolean;
}

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

type Via = 'customer_key' | 'click_id';
type PartnerProgramRow = { partner_id: string | null };

/** A sale that passed every check: what to write for it. */
interface Attribution {
  customer: CustomerRow;
  partnerId: string;
  amount: number;
  /** Why the sale earns no commission, or null when it earns `amount`. */
  noCommission: string | null;
}

const duplicate = (programId: number): Applied => ({
  programId,
  statusCode: 409,
  body: { error: DUPLICATE_SALE, message: DUPLICATE_SALE, statusCode: 409 },
});
const bad = (programId: number, error: string): Applied => ({ programId, statusCode: 400, body: { error } });
const NOT_FOUND = 'Customer not found. Provide customer_key or click_id.';

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
    applyBatch: (tx, cmds, ctx) => applySales(tx, cmds, ctx, opts),
  };
}

// ---- the decisions, shared by both forms ----

/** The 401 for a program that does not exist (or no longer does), or null. */
function checkProgram(cmd: SaleCommand, program: ProgramRow | undefined): Applied | null {
  if (!program || program.deleted)
    return { programId: cmd.program_id, statusCode: 401, body: { error: 'Invalid tracking token' } };
  return null;
}

/** Every check after the customer was looked up: a 400, or what the sale earns. */
function attribute(
  cmd: SaleCommand,
  program: ProgramRow,
  found: { row: CustomerRow; via: Via } | null,
  pp: PartnerProgramRow | undefined,
): Applied | Attribution {
  if (!found) return bad(cmd.program_id, NOT_FOUND);
  const { row: customer, via } = found;
  if (Number(customer.program_id) !== cmd.program_id || customer.partner_id === null) {
    return bad(cmd.program_id, 'No affiliate attribution found for this customer in this program');
  }
  if (customer.partner_program_id === null || !pp) {
    return bad(cmd.program_id, 'No partner-program relationship found for this customer');
  }
  if (pp.partner_id === null) return bad(cmd.program_id, 'partnerId required to create commission');

  const parsedPolicy = parsePolicy(program.commission);
  const policy = typeof parsedPolicy === 'string' ? DEFAULT_POLICY : parsedPolicy;
  const saleAt = new Date(cmd.ts);
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
  return { customer, partnerId: pp.partner_id, amount, noCommission };
}

const isAttribution = (d: Applied | Attribution): d is Attribution => 'customer' in d;

function testAnswer(cmd: SaleCommand, saleId: number): Applied {
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

function noCommissionAnswer(cmd: SaleCommand, saleId: number, message: string): Applied {
  return {
    programId: cmd.program_id,
    statusCode: 200,
    body: { success: true, sale_id: saleId, commission_id: null, message },
  };
}

function commissionAnswer(cmd: SaleCommand, a: Attribution, saleId: number, commissionId: number): Applied {
  const ledger: LedgerEffect = {
    topic: 'ledger',
    entry_key: `commission:${commissionId}:created`,
    kind: 'commission_created',
    partner_id: Number(a.partnerId),
    partner_program_id: Number(a.customer.partner_program_id),
    commission_id: commissionId,
    amount_cents: a.amount,
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

/** The sale's row, as the columns of the sales insert (both forms write the same values). */
function saleRow(
  cmd: SaleCommand,
  c: { customerId: string | null; partnerId: string | null; ppId: string | null },
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
  };
}
type SaleRow = ReturnType<typeof saleRow>;

/**
 * Inserts sales with one statement (an array per column, so the statement text and its plan do not
 * depend on the row count); returns the id of each inserted row by transaction_id. A transaction_id that is
 * already taken is skipped (`on conflict do nothing`), so it is missing from the result.
 */
async function insertSales(tx: Tx, rows: SaleRow[]): Promise<Map<string, number>> {
  const col = <K extends keyof SaleRow>(k: K) => rows.map((r) => r[k]);
  // As text, cast in SQL: postgres.js types a JS boolean array as one boolean, and its boolean serializer
  // turns any string into false.
  const bools = (v: boolean[]) => v.map(String);
  const got = await tx<{ id: string; transaction_id: string }[]>`
    insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, click_id, customer_key,
                       transaction_id, amount_cents, currency, sale_type, payment_status, is_recurring,
                       subscription_id, subscription_interval, product_id, line_items, is_test, sale_date)
    select r, p, c, pa, pp, ck, k, t, a, cur, st, 'paid', rec::boolean, sub, si, pr, li::jsonb, te::boolean, sd
    from unnest(${col('request_id')}::text[], ${col('program_id')}::bigint[], ${col('customer_id')}::bigint[],
                ${col('partner_id')}::bigint[], ${col('partner_program_id')}::bigint[], ${col('click_id')}::text[],
                ${col('customer_key')}::text[], ${col('transaction_id')}::text[], ${col('amount_cents')}::bigint[],
                ${col('currency')}::text[], ${col('sale_type')}::text[], ${bools(col('is_recurring'))}::text[],
                ${col('subscription_id')}::text[], ${col('subscription_interval')}::text[],
                ${col('product_id')}::text[], ${col('line_items')}::text[], ${bools(col('is_test'))}::text[],
                ${col('sale_date')}::timestamptz[])
      as v(r, p, c, pa, pp, ck, k, t, a, cur, st, rec, sub, si, pr, li, te, sd)
    on conflict (transaction_id) do nothing
    returning id, transaction_id`;
  return new Map(got.map((r) => [r.transaction_id, Number(r.id)]));
}

interface CommissionRow {
  sale_id: number;
  program_id: number;
  partner_id: string;
  partner_program_id: string;
  customer_id: string;
  amount_cents: number;
  currency: string;
}

/** Inserts commissions (status pending) with one statement; returns each new id by sale_id. */
async function insertCommissions(tx: Tx, rows: CommissionRow[]): Promise<Map<number, number>> {
  if (rows.length === 0) return new Map();
  const col = <K extends keyof CommissionRow>(k: K) => rows.map((r) => r[k]);
  const got = await tx<{ id: string; sale_id: string }[]>`
    insert into commissions (sale_id, program_id, partner_id, partner_program_id, customer_id, status,
                             amount_cents, currency)
    select s, p, pa, pp, c, 'pending', a, cur
    from unnest(${col('sale_id')}::bigint[], ${col('program_id')}::bigint[], ${col('partner_id')}::bigint[],
                ${col('partner_program_id')}::bigint[], ${col('customer_id')}::bigint[],
                ${col('amount_cents')}::bigint[], ${col('currency')}::text[])
      as v(s, p, pa, pp, c, a, cur)
    returning id, sale_id`;
  return new Map(got.map((r) => [Number(r.sale_id), Number(r.id)]));
}

/**
 * A sale's effect on its customer: click or lead becomes conversion; first_purchase_date and (with a
 * commission) first_commission_at are set unless already set. `purchaseAt` / `commissionAt` are the times
 * of the customer's first sale / first commission in this statement's batch (null: none).
 */
async function updateCustomers(
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

const CUSTOMER_COLUMNS = `id, program_id, partner_id, partner_program_id, customer_status, last_click_at,
  first_purchase_date, first_commission_at, customer_key, click_id`;

/**
 * Whether a click id that matched no customer was minted moments ago, so its click may still be in the
 * pipeline and is worth waiting for. Not when it is not one of ours, and not when it claims a time in the
 * future (beyond a second of clock skew): a forged id must not hold the partition up.
 */
function isRecentClick(clickId: string, waitMs: number): boolean {
  const parsed = parseClickId(clickId);
  if (!parsed) return false;
  const age = Date.now() - snowflakeTime(BigInt(parsed.id));
  return age > -1000 && age < waitMs;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- one command at a time ----

async function findCustomer(tx: Tx, cmd: SaleCommand): Promise<{ row: CustomerRow; via: Via } | null> {
  if (cmd.customer_key !== null) {
    const [row] = await tx<CustomerRow[]>`
      select ${tx.unsafe(CUSTOMER_COLUMNS)}
      from customers where program_id = ${cmd.program_id} and customer_key = ${cmd.customer_key} for no key update`;
    if (row) return { row, via: 'customer_key' };
  }
  if (cmd.click_id !== null) {
    const [row] = await tx<CustomerRow[]>`
      select ${tx.unsafe(CUSTOMER_COLUMNS)} from customers where click_id = ${cmd.click_id} for no key update`;
    if (row) return { row, via: 'click_id' };
  }
  return null;
}

async function loadPrograms(tx: Tx, ids: number[], memo: Map<string, unknown>): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !memo.has(`program:${id}`));
  if (missing.length === 0) return;
  const rows = await tx<ProgramRow[]>`
    select id, commission, cookie_window_days, deleted_at is not null as deleted
    from programs where id = any(${missing}::bigint[])`;
  for (const p of rows) memo.set(`program:${p.id}`, p);
}

async function applySale(
  tx: Tx,
  cmd: SaleCommand,
  ctx: ApplyContext,
  opts: SaleApplierOptions,
): Promise<Applied> {
  await loadPrograms(tx, [cmd.program_id], ctx.memo);
  const program = ctx.memo.get(`program:${cmd.program_id}`) as ProgramRow | undefined;
  const refused = checkProgram(cmd, program);
  if (refused || !program) return refused!;

  if (cmd.is_test) {
    // Test mode: an is_test sale, nothing attributed, no commission, balance or metric.
    const ids = await insertSales(tx, [saleRow(cmd, { customerId: null, partnerId: null, ppId: null })]);
    const saleId = ids.get(cmd.transaction_id);
    return saleId === undefined ? duplicate(cmd.program_id) : testAnswer(cmd, saleId);
  }

  // Duplicate detection is global (all programs) and comes before anything else.
  const [dup] = await tx`select 1 from sales where transaction_id = ${cmd.transaction_id}`;
  if (dup) return duplicate(cmd.program_id);

  let found = await findCustomer(tx, cmd);
  if (!found && cmd.click_id !== null) {
    // A sale sent right after its click's 200 may overtake the click pipeline: wait, bounded, for a click
    // id minted moments ago. Statements in READ COMMITTED see each new commit; no lock is held yet.
    while (!found && isRecentClick(cmd.click_id, opts.recentClickWaitMs)) {
      await sleep(50);
      found = await findCustomer(tx, cmd);
    }
  }
  let pp: PartnerProgramRow | undefined;
  if (found?.row.partner_program_id) {
    [pp] = await tx<PartnerProgramRow[]>`
      select partner_id from partner_programs where id = ${found.row.partner_program_id}`;
  }
  const decision = attribute(cmd, program, found, pp);
  if (!isAttribution(decision)) return decision;
  const { customer } = decision;

  const ids = await insertSales(tx, [
    saleRow(cmd, {
      customerId: customer.id,
      partnerId: customer.partner_id,
      ppId: customer.partner_program_id,
    }),
  ]);
  const saleId = ids.get(cmd.transaction_id);
  if (saleId === undefined) return duplicate(cmd.program_id);

  const saleAt = new Date(cmd.ts).toISOString();
  await updateCustomers(tx, [{ id: customer.id, purchaseAt: saleAt, commissionAt: null }]);
  ctx.rollups.add(cmd.program_id, cmd.ts, {
    sales: 1,
    revenue_cents: cmd.amount_cents,
    conversions: customer.first_purchase_date === null ? 1 : 0,
  });
  if (decision.noCommission) return noCommissionAnswer(cmd, saleId, decision.noCommission);

  // The sale stands even if the commission cannot be created (spec: the transaction_id stays consumed). On
  // the optimistic pass a failure here aborts the chunk, which is then applied carefully, with this savepoint.
  const createCommission = async (sp: Tx) => {
    const created = await insertCommissions(sp, [
      {
        sale_id: saleId,
        program_id: cmd.program_id,
        partner_id: decision.partnerId,
        partner_program_id: customer.partner_program_id!,
        customer_id: customer.id,
        amount_cents: decision.amount,
        currency: cmd.currency,
      },
    ]);
    await sp`update customers set first_commission_at = coalesce(first_commission_at, ${saleAt}::timestamptz)
             where id = ${customer.id}`;
    return created.get(saleId)!;
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
  ctx.rollups.add(cmd.program_id, cmd.ts, { commission_cents: decision.amount });
  return commissionAnswer(cmd, decision, saleId, commissionId);
}

// ---- a whole chunk ----

async function applySales(
  tx: Tx,
  cmds: SaleCommand[],
  ctx: ApplyContext,
  opts: SaleApplierOptions,
): Promise<Applied[]> {
  await loadPrograms(
    tx,
    cmds.map((c) => c.program_id),
    ctx.memo,
  );
  const programOf = (cmd: SaleCommand) => ctx.memo.get(`program:${cmd.program_id}`) as ProgramRow | undefined;
  const live = cmds.filter((c) => !checkProgram(c, programOf(c)));

  const taken = new Set(
    (
      await tx<{ transaction_id: string }[]>`
        select transaction_id from sales where transaction_id = any(${live.map((c) => c.transaction_id)}::text[])`
    ).map((r) => r.transaction_id),
  );

  // The customers the chunk's sales may resolve to, locked in id order (so two chunks never wait on each
  // other in a cycle). Over-locking (a click_id's customer when the customer_key one wins) is harmless.
  const toResolve = live.filter((c) => !c.is_test && !taken.has(c.transaction_id));
  const byKey = new Map<string, CustomerRow>();
  const byClick = new Map<string, CustomerRow>();
  const resolve = (cmd: SaleCommand): { row: CustomerRow; via: Via } | null => {
    const k = cmd.customer_key === null ? undefined : byKey.get(`${cmd.program_id}|${cmd.customer_key}`);
    if (k) return { row: k, via: 'customer_key' };
    const c = cmd.click_id === null ? undefined : byClick.get(cmd.click_id);
    return c ? { row: c, via: 'click_id' } : null;
  };
  const lockCustomers = async () => {
    const keyed = toResolve.filter((c) => c.customer_key !== null);
    const clicks = toResolve.flatMap((c) => (c.click_id === null ? [] : [c.click_id]));
    const rows = await tx<(CustomerRow & { customer_key: string | null; click_id: string | null })[]>`
      select ${tx.unsafe(CUSTOMER_COLUMNS)} from customers where id in (
        select c.id from unnest(${keyed.map((c) => c.program_id)}::bigint[], ${keyed.map((c) => c.customer_key)}::text[])
          as k(p, ck) join customers c on c.program_id = k.p and c.customer_key = k.ck
        union all
        select id from customers where click_id = any(${clicks}::text[]))
      order by id
      for no key update`;
    byKey.clear();
    byClick.clear();
    for (const { customer_key, click_id, ...row } of rows) {
      if (customer_key !== null) byKey.set(`${row.program_id}|${customer_key}`, row);
      if (click_id !== null) byClick.set(click_id, row);
    }
  };
  if (toResolve.length > 0) await lockCustomers();
  // Sales sent right after their click's 200 may overtake the click pipeline: wait, bounded, for click ids
  // minted moments ago (the per-command form waits the same way, holding the same kind of locks).
  const waiting = () =>
    toResolve.some(
      (c) => c.click_id !== null && !resolve(c) && isRecentClick(c.click_id, opts.recentClickWaitMs),
    );
  while (waiting()) {
    await sleep(50);
    await lockCustomers();
  }

  const ppIds = [
    ...new Set([...byKey.values(), ...byClick.values()].flatMap((r) => r.partner_program_id ?? [])),
  ];
  const pps = new Map(
    ppIds.length === 0
      ? []
      : (
          await tx<{ id: string; partner_id: string | null }[]>`
            select id, partner_id from partner_programs where id = any(${ppIds}::bigint[])`
        ).map((r) => [r.id, { partner_id: r.partner_id }] as const),
  );

  // Decide every sale in message order. A customer row is one object in both maps, so its second sale in
  // the chunk sees what its first did (conversion, first purchase, first commission).
  type Pending =
    { answer: Applied } | { test: true; cmd: SaleCommand } | { attribution: Attribution; cmd: SaleCommand };
  const pending: Pending[] = [];
  const rows: SaleRow[] = [];
  const customers = new Map<string, { id: string; purchaseAt: string; commissionAt: string | null }>();
  for (const cmd of cmds) {
    const program = programOf(cmd);
    const refused = checkProgram(cmd, program);
    if (refused || !program) {
      pending.push({ answer: refused! });
      continue;
    }
    if (taken.has(cmd.transaction_id)) {
      pending.push({ answer: duplicate(cmd.program_id) });
      continue;
    }
    if (cmd.is_test) {
      taken.add(cmd.transaction_id);
      rows.push(saleRow(cmd, { customerId: null, partnerId: null, ppId: null }));
      pending.push({ test: true, cmd });
      continue;
    }
    const found = resolve(cmd);
    const pp = found?.row.partner_program_id ? pps.get(found.row.partner_program_id) : undefined;
    const decision = attribute(cmd, program, found, pp);
    if (!isAttribution(decision)) {
      pending.push({ answer: decision });
      continue;
    }
    const { customer } = decision;
    taken.add(cmd.transaction_id);
    rows.push(
      saleRow(cmd, {
        customerId: customer.id,
        partnerId: customer.partner_id,
        ppId: customer.partner_program_id,
      }),
    );
    pending.push({ attribution: decision, cmd });
    const saleAt = new Date(cmd.ts);
    ctx.rollups.add(cmd.program_id, cmd.ts, {
      sales: 1,
      revenue_cents: cmd.amount_cents,
      conversions: customer.first_purchase_date === null ? 1 : 0,
    });
    const update = customers.get(customer.id) ?? {
      id: customer.id,
      purchaseAt: saleAt.toISOString(),
      commissionAt: null,
    };
    customers.set(customer.id, update);
    if (customer.customer_status === 'click' || customer.customer_status === 'lead')
      customer.customer_status = 'conversion';
    customer.first_purchase_date ??= saleAt;
    if (!decision.noCommission) {
      update.commissionAt ??= saleAt.toISOString();
      customer.first_commission_at ??= saleAt;
      ctx.rollups.add(cmd.program_id, cmd.ts, { commission_cents: decision.amount });
    }
  }

  const saleIds = rows.length === 0 ? new Map<string, number>() : await insertSales(tx, rows);
  if (saleIds.size !== rows.length) {
    // A concurrent transaction took one of these transaction_ids after our check: the per-command form
    // answers that sale 409 and decides the rest without it.
    throw new CarefulPassNeeded('a transaction_id was taken concurrently');
  }
  const commissionRows: CommissionRow[] = [];
  for (const p of pending) {
    if (!('attribution' in p) || p.attribution.noCommission) continue;
    const a = p.attribution;
    commissionRows.push({
      sale_id: saleIds.get(p.cmd.transaction_id)!,
      program_id: p.cmd.program_id,
      partner_id: a.partnerId,
      partner_program_id: a.customer.partner_program_id!,
      customer_id: a.customer.id,
      amount_cents: a.amount,
      currency: p.cmd.currency,
    });
  }
  const commissionIds = await insertCommissions(tx, commissionRows);
  await updateCustomers(tx, [...customers.values()]);

  return pending.map((p) => {
    if ('answer' in p) return p.answer;
    const saleId = saleIds.get(p.cmd.transaction_id)!;
    if ('test' in p) return testAnswer(p.cmd, saleId);
    const a = p.attribution;
    if (a.noCommission) return noCommissionAnswer(p.cmd, saleId, a.noCommission);
    return commissionAnswer(p.cmd, a, saleId, commissionIds.get(saleId)!);
  });
}
