// The attribution and commission step (spec 4.3, CONTRACT "Tracking decisions" and commission policy):
// one implementation, set-based, for a chunk or for one command. Why it is shaped so: docs/pipeline.md.
import type { Sql, Tx } from '../../../shared/db/sql.ts';
import type { SaleCommand, LedgerEffect } from '../../../shared/contracts/commands.ts';
import { parseCommand } from '../../../shared/contracts/commands.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../../shared/pipeline/command-handler.ts';
import { CarefulPassNeeded } from '../../../shared/pipeline/command-handler.ts';
import { attribute } from './attribute.ts';
import type { Attribution, CustomerRow, Via } from './attribute.ts';
import { CodeAttribution } from './by-code.ts';
import type { CodeAttributionMode } from './by-code.ts';
import { isEventDerived, parseClickId, snowflakeTime } from '../../../shared/domain/ids.ts';
import { currencyMismatch } from '../../../shared/domain/money.ts';
import type { WebhookEventInput } from '../../../shared/db/webhook-events.ts';
import { saleView } from '../../../shared/views/sale.ts';
import * as lifecycle from '../../../shared/commissions/lifecycle.ts';
import type { NewCommission } from '../../../shared/commissions/lifecycle.ts';
import { nothing, recordCaused } from '../../../shared/commissions/caused.ts';
import type { Caused } from '../../../shared/commissions/caused.ts';
import { CUSTOMER_KEY_COLUMNS, customerKeys } from '../../../shared/rollups/rules.ts';
import type { DimensionKeys } from '../../../shared/rollups/rules.ts';
import { insertSales, saleRow, updateCustomers } from './sale-rows.ts';
import { ChunkRewards, noAwards } from './rewards.ts';
import { PAIRS_COLUMN, rewardColumns } from './reward-context.ts';
import type { ProgramRewardColumns } from './reward-context.ts';
import type { SaleRow } from './sale-rows.ts';

export const DUPLICATE_SALE = 'Duplicate transaction_id. This sale has already been recorded.';

interface ProgramRow extends ProgramRewardColumns {
  id: string;
  commission: unknown;
  cookie_window_days: number;
  currency: string;
  deleted: boolean;
  workspace_id: string | null;
  hold_days: number;
  code_attribution: CodeAttributionMode;
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
  /** KAFKA_PREFIX: the outbox topic of the `sale.created` and `commission.created` webhook events. */
  kafkaPrefix: string;
}

export function createSaleApplier(opts: SaleApplierOptions): CommandApplier<SaleCommand> {
  return {
    kind: 'sale',
    parse: (bytes) => parseCommand<SaleCommand>(bytes, 'sale'),
    // Before the transaction, holding no lock: sales sent right after their click's 200 may overtake it.
    prepare: (sql, cmds) => awaitRecentClicks(sql, cmds, opts.recentClickWaitMs),
    // The careful pass's per-command form is the set-based form applied to one command.
    apply: async (tx, cmd, ctx) => (await applySales(tx, [cmd], ctx, opts.kafkaPrefix))[0]!,
    applyBatch: (tx, cmds, ctx) => applySales(tx, cmds, ctx, opts.kafkaPrefix),
  };
}

// ---- the decisions ----

/** The 401 for a program that does not exist (or no longer does), or null. */
function checkProgram(cmd: SaleCommand, program: ProgramRow | undefined): Applied | null {
  if (!program || program.deleted)
    return { programId: cmd.program_id, statusCode: 401, body: { error: 'Invalid tracking token' } };
  return null;
}

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

function commissionAnswer(
  cmd: SaleCommand,
  saleId: number,
  commissionId: number,
  credit: LedgerEffect[],
): Applied {
  return {
    programId: cmd.program_id,
    statusCode: 200,
    body: {
      success: true,
      sale_id: saleId,
      commission_id: commissionId,
      message: 'Sale recorded and commission created',
    },
    effects: credit,
  };
}

const CUSTOMER_COLUMNS = `id, program_id, partner_program_id, customer_status, last_click_at,
  first_purchase_date, first_commission_at, customer_key, click_id, ${CUSTOMER_KEY_COLUMNS}, ${PAIRS_COLUMN}`;

/**
 * Whether a click id that matched no customer may still be in the pipeline and is worth waiting for: a
 * snowflake minted moments ago (not one claiming a time in the future beyond a second of clock skew: a
 * forged id must not hold the partition up), or an id derived from a client's event_id, which carries no
 * time: that one is waited for until `waitMs` after the sale itself reached the ingress (`saleTs`), the
 * same bound a forged recent snowflake gets.
 */
function isRecentClick(clickId: string, waitMs: number, saleTs: number): boolean {
  const parsed = parseClickId(clickId);
  if (!parsed) return false;
  const n = BigInt(parsed.id);
  const age = Date.now() - (isEventDerived(n) ? saleTs : snowflakeTime(n));
  return age > -1000 && age < waitMs;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits, bounded, until every sale naming a click id minted moments ago can find its customer (by that
 * click id, or by its customer_key). Plain reads outside any transaction: the wait holds no lock, so no
 * other chunk waits behind it. The bound is the click's age, so it never exceeds `waitMs` after minting.
 */
export async function awaitRecentClicks(sql: Sql, cmds: SaleCommand[], waitMs: number): Promise<void> {
  let waiting = cmds.filter(
    (c) => !c.is_test && c.click_id !== null && isRecentClick(c.click_id, waitMs, c.ts),
  );
  while (waiting.length > 0) {
    const keyed = waiting.filter((c) => c.customer_key !== null);
    const found = await sql<{ click_id: string | null; program_id: string; customer_key: string | null }[]>`
      select click_id, program_id, customer_key from customers where click_id = any(${waiting.map((c) => c.click_id!)}::text[])
      union all
      select c.click_id, c.program_id, c.customer_key
      from unnest(${keyed.map((c) => c.program_id)}::bigint[], ${keyed.map((c) => c.customer_key)}::text[]) as k(p, ck)
      join customers c on c.program_id = k.p and c.customer_key = k.ck`;
    const clicks = new Set(found.map((r) => r.click_id));
    const keys = new Set(found.map((r) => `${r.program_id}|${r.customer_key}`));
    waiting = waiting.filter(
      (c) =>
        !clicks.has(c.click_id) &&
        !keys.has(`${c.program_id}|${c.customer_key}`) &&
        isRecentClick(c.click_id!, waitMs, c.ts),
    );
    if (waiting.length > 0) await sleep(50);
  }
}

/** The programs, with their groups, ladders and bonuses for pricing (reward-context.ts), once per chunk. */
async function loadPrograms(tx: Tx, cmds: SaleCommand[], memo: Map<string, unknown>): Promise<void> {
  const missing = [...new Set(cmds.map((c) => c.program_id))].filter((id) => !memo.has(`program:${id}`));
  if (missing.length === 0) return;
  const since = new Date(Math.min(...cmds.map((c) => c.ts), Date.now()));
  const rows = await tx<ProgramRow[]>`
    select id, commission, cookie_window_days, trim(currency) as currency, deleted_at is not null as deleted,
           workspace_id, hold_days, code_attribution, ${rewardColumns(tx, since)}
    from programs where id = any(${missing}::bigint[])`;
  for (const p of rows) memo.set(`program:${p.id}`, p);
}

// ---- a chunk (or one command) ----

async function applySales(
  tx: Tx,
  given: SaleCommand[],
  ctx: ApplyContext,
  kafkaPrefix: string,
): Promise<Applied[]> {
  await loadPrograms(tx, given, ctx.memo);
  const programOf = (cmd: SaleCommand) => ctx.memo.get(`program:${cmd.program_id}`) as ProgramRow | undefined;
  // An omitted currency is the program's.
  const cmds = given.map((c) =>
    c.currency === null ? { ...c, currency: programOf(c)?.currency ?? null } : c,
  );
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
  // A recent click the pipeline had not stored yet was waited for before the transaction (prepare): never
  // here, where the customers are locked.
  if (toResolve.length > 0) await lockCustomers();
  // Partner codes: the sales' codes, and the customers a code creates (by-code.ts).
  const codes = await CodeAttribution.load(tx, toResolve, resolve, byKey, CUSTOMER_COLUMNS);

  const ppIds = [
    ...new Set([
      ...[...byKey.values(), ...byClick.values()].flatMap((r) => r.partner_program_id ?? []),
      ...codes.partnerProgramIds(),
    ]),
  ];
  // The partners' groups and overrides, their programs' groups, the customers' pairs: what prices each sale.
  const rewards = await ChunkRewards.load(tx, ctx.memo, {
    sales: toResolve,
    ppIds,
    customers: [...new Set([...byKey.values(), ...byClick.values()])],
  });
  const pps = rewards.pps;

  // Decide every sale in message order. A customer row is one object in both maps, so its second sale in
  // the chunk sees what its first did (conversion, first purchase, first commission).
  type Pending =
    | { answer: Applied }
    | { test: true; cmd: SaleCommand; row: SaleRow }
    | {
        attribution: Attribution;
        cmd: SaleCommand;
        firstPurchase: boolean;
        row: SaleRow;
        keys: DimensionKeys;
      };
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
    if (cmd.currency !== program.currency) {
      pending.push({ answer: bad(cmd.program_id, currencyMismatch(program.currency)) });
      continue;
    }
    if (taken.has(cmd.transaction_id)) {
      pending.push({ answer: duplicate(cmd.program_id) });
      continue;
    }
    if (cmd.is_test) {
      taken.add(cmd.transaction_id);
      const row = saleRow(
        cmd,
        { customerId: null, partnerId: null, ppId: null },
        codes.saleColumns(cmd),
        null,
      );
      rows.push(row);
      pending.push({ test: true, cmd, row });
      continue;
    }
    const found = codes.claim(cmd, resolve(cmd), program.code_attribution, pps);
    const pp = found?.row.partner_program_id ? pps.get(found.row.partner_program_id) : undefined;
    const decision = attribute(cmd, program, found, pp, rewards.pricing);
    if ('refused' in decision) {
      pending.push({ answer: bad(cmd.program_id, decision.refused) });
      continue;
    }
    const { customer } = decision;
    taken.add(cmd.transaction_id);
    const ids = {
      customerId: customer.id,
      partnerId: customer.partner_id,
      ppId: customer.partner_program_id,
    };
    // The customer's keys now (its partner, link and attributing click's visit keys): this sale counts
    // there, whatever a later sale of the chunk does to the customer.
    const keys = customerKeys(customer);
    const row = saleRow(cmd, ids, codes.saleColumns(cmd), keys);
    rows.push(row);
    pending.push({
      attribution: decision,
      cmd,
      firstPurchase: customer.first_purchase_date === null,
      row,
      keys,
    });
    const saleAt = new Date(cmd.ts);
    const update = customers.get(customer.id) ?? {
      id: customer.id,
      purchaseAt: saleAt.toISOString(),
      commissionAt: null,
    };
    customers.set(customer.id, update);
    if (customer.customer_status === 'click' || customer.customer_status === 'lead')
      customer.customer_status = 'conversion';
    rewards.decided(decision, cmd, {
      firstPurchase: customer.first_purchase_date === null,
      program: { currency: program.currency, hold_days: program.hold_days },
    });
    customer.first_purchase_date ??= saleAt;
    if (!decision.noCommission) {
      update.commissionAt ??= saleAt.toISOString();
      customer.first_commission_at ??= saleAt;
    }
  }

  await codes.save(tx);
  const saleIds = rows.length === 0 ? new Map<string, number>() : await insertSales(tx, rows);
  if (saleIds.size !== rows.length) {
    // A concurrent transaction took a transaction_id after our check. One command on the careful pass:
    // its 409. A chunk: the careful pass answers that sale 409 and decides the rest without it.
    if (ctx.careful && cmds.length === 1) return [duplicate(cmds[0]!.program_id)];
    throw new CarefulPassNeeded('a transaction_id was taken concurrently');
  }
  const earned: NewCommission[] = [];
  for (const p of pending) {
    if (!('attribution' in p) || p.attribution.noCommission) continue;
    const a = p.attribution;
    const group = a.groupId === null ? undefined : rewards.groupById(a.groupId);
    earned.push({
      sale_id: saleIds.get(p.cmd.transaction_id)!,
      program_id: p.cmd.program_id,
      partner_id: a.partnerId,
      partner_program_id: a.customer.partner_program_id!,
      customer_id: a.customer.id,
      amount_cents: a.amount,
      currency: programOf(p.cmd)!.currency,
      sale_ts: p.cmd.ts,
      // The group's hold, else the program's.
      hold_days: group?.holdDays ?? programOf(p.cmd)!.hold_days,
      group_id: a.groupId,
      rule: a.rule,
    });
  }
  // The commissions (the lifecycle's `create`: pending, payable_at, review holds) and what they caused.
  let created: Awaited<ReturnType<typeof lifecycle.create>> = { rows: [], caused: nothing() };
  // The rewards' writes (moves, pairs, figures) and the bonuses the chunk's sales reached (rewards.ts).
  let awarded = noAwards();
  if (ctx.careful) {
    // The sale stands even if its commission cannot be created (spec: the transaction_id stays consumed):
    // the commission and first_commission_at in a savepoint of their own, a failure answered 500.
    await updateCustomers(
      tx,
      [...customers.values()].map((c) => ({ ...c, commissionAt: null })),
    );
    const withCommission = [...customers.values()].filter((c) => c.commissionAt !== null);
    created = await tx
      .savepoint(async (sp) => {
        const made = await lifecycle.create(sp, earned);
        await updateCustomers(sp, withCommission);
        awarded = await rewards.save(sp, { kafkaPrefix, memo: ctx.memo });
        return made;
      })
      .catch(() => {
        awarded = noAwards();
        return created;
      });
  } else {
    created = await lifecycle.create(tx, earned);
    await updateCustomers(tx, [...customers.values()]);
    awarded = await rewards.save(tx, { kafkaPrefix, memo: ctx.memo });
  }
  const commissionIds = new Map(created.rows.map((r) => [Number(r.sale_id), Number(r.id)]));
  const createdEvent = new Map(
    created.caused.events.flatMap((e) => (e.type === 'commission.created' ? [[e.data.id, e] as const] : [])),
  );
  // Each commission's credit is its command's effect (the ledger's path for commands: after the commit).
  const credits = new Map<number, LedgerEffect[]>(created.caused.ledger.map((e) => [e.commission_id!, [e]]));

  // The webhook events of what was written, each sale's `sale.created` before its `commission.created`
  // (one outbox statement for the chunk).
  const events: WebhookEventInput[] = [];
  const now = new Date().toISOString();
  const recordEvents = (cmd: SaleCommand, saleId: number, row: SaleRow, commissionId: number | null) => {
    const program = programOf(cmd)!;
    if (program.workspace_id === null) return;
    events.push({
      workspace_id: Number(program.workspace_id),
      program_id: cmd.program_id,
      type: 'sale.created',
      data: saleView({ ...row, id: saleId, currency: program.currency, created_at: now }, commissionId),
    });
    const commissionEvent = commissionId === null ? undefined : createdEvent.get(commissionId);
    if (commissionEvent) events.push(commissionEvent);
  };
  const answers = pending.map((p) => withBonuses(p, decide(p)));
  function withBonuses(p: Pending, answer: Applied): Applied {
    // A bonus's credit travels with the sale that reached it, as the sale's own does.
    const extra = 'attribution' in p ? awarded.credits.get(p.cmd.transaction_id) : undefined;
    return extra ? { ...answer, effects: [...(answer.effects ?? []), ...extra] } : answer;
  }
  function decide(p: Pending): Applied {
    if ('answer' in p) return p.answer;
    const saleId = saleIds.get(p.cmd.transaction_id)!;
    if ('test' in p) {
      recordEvents(p.cmd, saleId, p.row, null);
      return testAnswer(p.cmd, saleId);
    }
    const { cmd, attribution: a, keys } = p;
    ctx.rollups.add(
      cmd.program_id,
      cmd.ts,
      { sales: 1, revenue_cents: cmd.amount_cents, conversions: p.firstPurchase ? 1 : 0 },
      keys,
    );
    const commissionId = a.noCommission ? undefined : commissionIds.get(saleId);
    recordEvents(cmd, saleId, p.row, commissionId ?? null);
    if (a.noCommission) return noCommissionAnswer(cmd, saleId, a.noCommission);
    if (commissionId === undefined)
      return { programId: cmd.program_id, statusCode: 500, body: { error: 'Failed to create commission' } };
    ctx.rollups.add(cmd.program_id, cmd.ts, { commission_cents: a.amount }, keys);
    return commissionAnswer(cmd, saleId, commissionId, credits.get(commissionId) ?? []);
  }
  // The chunk's events and the commissions' credits through the lifecycle's one writer; the credits are
  // the commands' effects (above), published to the ledger worker after the commit.
  const caused: Caused = { ...created.caused, events: [...events, ...awarded.caused.events] };
  await recordCaused(tx, { kafkaPrefix, memo: ctx.memo, ledger: 'after-commit' }, caused);
  return answers;
}
