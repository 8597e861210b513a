// Test worlds through the commission lifecycle (issue 38, item 7): every commission a test needs is created,
// held, approved, paid, put in a payout and refunded by the functions the services run
// (shared/commissions/lifecycle.ts and the operations that call it), never written by SQL, so a new rule in
// the lifecycle is a rule every test world obeys. What a helper still writes by hand are fixtures that are
// no commission's state: the sale a commission is of, the customer it was made through (and, for a review
// hold, the click, claim or sign-in that makes the lifecycle's own rule hold it). The guard,
// test/unit/test-worlds.test.ts, fails a test file that writes commission states, payouts or ledger rows
// by SQL.
import { randomBytes } from 'node:crypto';
import type { Sql, Tx } from '../../shared/db/sql.ts';
import * as lifecycle from '../../shared/commissions/lifecycle.ts';
import { recordCaused } from '../../shared/commissions/caused.ts';
import type { CommissionState } from '../../shared/commissions/states.ts';
import type { LedgerEffect } from '../../shared/contracts/commands.ts';
import type { ReviewReason } from '../../shared/commissions/review-reasons.ts';
import { createApprovalSweep } from '../../services/workers/ledger/approval-sweep.ts';
import {
  approveCommission,
  markCommissionPaid,
  rejectCommission,
} from '../../services/api/modules/commissions/operations.ts';
import {
  cancelPayout,
  createProgramPayouts,
  payPayout,
} from '../../services/api/modules/payouts/operations.ts';

/** The outbox topics of the events and notifications the transitions cause (no relay reads them by default). */
const SEED_PREFIX = 'svc-test-seed';

export interface SeededCommission {
  id: number;
  saleId: number;
  transactionId: string;
  saleCents: number;
  amountCents: number;
}

/** Whose commissions (and, optionally, the test's KAFKA_PREFIX for the events they cause). */
export interface Owner {
  programId: number;
  partnerId: number;
  partnerProgramId: number;
  kafkaPrefix?: string;
}

/** The review holds a seeded commission can be given by the lifecycle's own rules (review-reasons.ts). */
export type HeldFor = Exclude<ReviewReason, 'paid_search'>;

export interface SeedItem {
  saleCents: number;
  amountCents: number;
  /**
   * `approved` (default): created with a hold of zero days, then approved by the real approval sweep.
   * `pending`: created in its hold of `payableInDays` (default 0: due, so the next sweep approves it unless
   * it is held for review).
   */
  status?: 'pending' | 'approved';
  payableInDays?: number;
  /**
   * Held for review at creation by the lifecycle's rule of that name: the helper writes the fixture the rule
   * reads (a customer with the partner's email, a disposable address, a bot click, a partner sign-in's IP,
   * a payout method shared with another partner account) and checks that the lifecycle held it so.
   */
  heldFor?: HeldFor;
  /** bot_traffic: the attributing click is this existing (bot or prefetch) click of the program. */
  clickId?: string;
}

const rand = () => randomBytes(6).toString('hex');

/** A customer of the program for the partner (a fixture: customers are not commission states). */
async function customer(
  tx: Tx,
  p: Owner,
  fields: { email?: string | null; clickId?: string | null },
): Promise<number> {
  const [c] = await tx<{ id: string }[]>`
    insert into customers (program_id, partner_id, partner_program_id, click_id, customer_status, customer_key,
                           email)
    values (${p.programId}, ${p.partnerId}, ${p.partnerProgramId}, ${fields.clickId ?? null}, 'lead',
            ${`seed-customer-${rand()}`}, ${fields.email ?? null})
    returning id`;
  return Number(c!.id);
}

/** A click of the partner's (as the click worker stores it), its click_id. */
async function click(tx: Tx, p: Owner, over: { quality?: string; ipHash?: string }): Promise<string> {
  const clickId = `cust_seed_${rand()}`;
  await tx`
    insert into click_events (event_id, click_timestamp, program_id, partner_id, partner_program_id, click_id,
                              is_test, quality, ip_hash)
    values (${String((BigInt(Date.now() - 60_000) << 22n) | BigInt(randomBytes(2).readUInt16BE(0)))},
            now() - interval '1 minute', ${p.programId}, ${p.partnerId}, ${p.partnerProgramId}, ${clickId}, false,
            ${over.quality ?? 'human'}, ${over.ipHash ?? null})`;
  return clickId;
}

/** An account that claimed the partner record: the one it has, or a new one. */
async function claimingAccount(tx: Tx, partnerId: number): Promise<number> {
  const [had] = await tx<{ account_id: string }[]>`
    select account_id from partner_claims where partner_id = ${partnerId} order by account_id limit 1`;
  if (had) return Number(had.account_id);
  const [a] = await tx<{ id: string }[]>`
    insert into partner_accounts (email, name) values (${`seed-${rand()}@example.com`}, 'Seed') returning id`;
  await tx`insert into partner_claims (account_id, partner_id, via) values (${a!.id}, ${partnerId}, 'seed')`;
  return Number(a!.id);
}

/** The fixtures that make the lifecycle's rule `reason` hold a new commission of the partner: its customer. */
async function customerHeldFor(tx: Tx, p: Owner, reason: HeldFor, clickId?: string): Promise<number> {
  switch (reason) {
    case 'self_referral': {
      const [pa] = await tx<{ email: string }[]>`select email from partners where id = ${p.partnerId}`;
      return customer(tx, p, { email: pa!.email });
    }
    case 'disposable_email':
      return customer(tx, p, { email: `buyer-${rand()}@mailinator.com` });
    case 'bot_traffic':
      return customer(tx, p, { clickId: clickId ?? (await click(tx, p, { quality: 'bot' })) });
    case 'partner_ip': {
      // The click came from the address a partner account that claimed the record signed in from (both
      // stored as keyed hashes; here one made-up hash).
      const ipHash = `seed-ip-${rand()}`;
      const account = await claimingAccount(tx, p.partnerId);
      await tx`insert into partner_sign_ins (account_id, ip_hash) values (${account}, ${ipHash})`;
      return customer(tx, p, { clickId: await click(tx, p, { ipHash }) });
    }
    case 'shared_payout_method': {
      // The partner's account pays out to the address another account of another partner record of the
      // workspace pays out to.
      const method = { type: 'paypal', email: `shared-${rand()}@example.com` };
      const account = await claimingAccount(tx, p.partnerId);
      await tx`update partner_accounts set payout_method = ${tx.json(method)} where id = ${account}`;
      const [other] = await tx<{ id: string }[]>`
        insert into partners (workspace_id, name, email)
        select workspace_id, 'Look-alike', ${`lookalike-${rand()}@example.com`} from programs where id = ${p.programId}
        returning id`;
      const [o] = await tx<{ id: string }[]>`
        insert into partner_accounts (email, name, payout_method)
        values (${`lookalike-${rand()}@example.com`}, 'Look-alike', ${tx.json(method)}) returning id`;
      await tx`insert into partner_claims (account_id, partner_id, via) values (${o!.id}, ${other!.id}, 'seed')`;
      return customer(tx, p, {});
    }
  }
}

/**
 * Sales of `saleCents` each with the commissions the lifecycle creates for them (`create`: pending until
 * payable_at, held where a review rule says so, the credit applied, `commission.created`), those asked
 * `approved` then approved by the real approval sweep. Returns them in the items' order.
 */
export async function seedCommissions(sql: Sql, p: Owner, items: SeedItem[]): Promise<SeededCommission[]> {
  const kafkaPrefix = p.kafkaPrefix ?? SEED_PREFIX;
  const seeded = await sql.begin(async (tx) => {
    const earned: lifecycle.NewCommission[] = [];
    const sales: { saleId: number; transactionId: string }[] = [];
    const now = Date.now();
    for (const item of items) {
      const transactionId = `seed-${rand()}`;
      const customerId = item.heldFor ? await customerHeldFor(tx, p, item.heldFor, item.clickId) : null;
      const [sale] = await tx<{ id: string }[]>`
        insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, transaction_id,
                           amount_cents, currency, sale_type, is_test, sale_date)
        values (${`req-${transactionId}`}, ${p.programId}, ${customerId}, ${p.partnerId}, ${p.partnerProgramId},
                ${transactionId}, ${item.saleCents}, 'USD', 'payment', false, ${new Date(now)})
        returning id`;
      sales.push({ saleId: Number(sale!.id), transactionId });
      earned.push({
        sale_id: Number(sale!.id),
        program_id: p.programId,
        partner_id: p.partnerId,
        partner_program_id: p.partnerProgramId,
        customer_id: customerId,
        amount_cents: item.amountCents,
        currency: 'USD',
        sale_ts: now,
        hold_days: item.status === 'pending' ? (item.payableInDays ?? 0) : 0,
      });
    }
    const created = await lifecycle.create(tx, earned);
    await recordCaused(tx, { kafkaPrefix }, created.caused);
    return created.rows.map((r, i) => {
      const item = items[i]!;
      if (r.review_reason !== (item.heldFor ?? null)) {
        throw new Error(`commission ${r.id}: held for ${r.review_reason}, asked ${item.heldFor ?? 'none'}`);
      }
      return {
        id: Number(r.id),
        saleId: sales[i]!.saleId,
        transactionId: sales[i]!.transactionId,
        saleCents: item.saleCents,
        amountCents: item.amountCents,
      };
    });
  });
  const approve = seeded.filter((_, i) => (items[i]!.status ?? 'approved') === 'approved');
  if (approve.length > 0) {
    if (items.some((it) => (it.status ?? 'approved') === 'approved' && it.heldFor)) {
      throw new Error('a commission held for review is not approved by the sweep: approve it (approveHeld)');
    }
    await sweepUntilApproved(
      sql,
      approve.map((c) => c.id),
      kafkaPrefix,
    );
  }
  return seeded;
}

/**
 * Commissions of sales a test wrote itself (its own clicks, customers and sales, at times of its choosing),
 * created as the attribution worker creates them (lifecycle `create`, with `recordCaused`: credits applied,
 * `commission.created`). Their ids, in the items' order.
 */
export async function createCommissions(
  sql: Sql,
  items: lifecycle.NewCommission[],
  kafkaPrefix = SEED_PREFIX,
): Promise<number[]> {
  return sql.begin(async (tx) => {
    const created = await lifecycle.create(tx, items);
    await recordCaused(tx, { kafkaPrefix }, created.caused);
    return created.rows.map((r) => Number(r.id));
  });
}

/**
 * Commissions as the attribution worker's command step creates them (lifecycle `create`, `recordCaused`
 * with the ledger `after-commit`): their rows and events written, their credits returned unapplied, as the
 * step publishes them to the ledger worker after its commit. For the ledger's own tests, which apply entries
 * through the ledger step in the orders they choose.
 */
export async function createCommissionsUncredited(
  sql: Sql,
  items: lifecycle.NewCommission[],
  kafkaPrefix = SEED_PREFIX,
): Promise<{ ids: number[]; credits: LedgerEffect[] }> {
  return sql.begin(async (tx) => {
    const created = await lifecycle.create(tx, items);
    const credits = await recordCaused(tx, { kafkaPrefix, ledger: 'after-commit' }, created.caused);
    return { ids: created.rows.map((r) => Number(r.id)), credits };
  });
}

/**
 * The approval sweep of the ledger worker (services/workers/ledger/approval-sweep.ts), run until these due,
 * unheld commissions are approved: it approves every due commission of the database, as the real one does.
 * Another process's sweep holding the lock approves them just the same.
 */
export async function sweepUntilApproved(sql: Sql, ids: number[], kafkaPrefix = SEED_PREFIX): Promise<void> {
  const sweep = createApprovalSweep({ sql, kafkaPrefix, batchSize: 500 });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const round = await sweep();
    const [left] = await sql<{ n: number }[]>`
      select count(*)::int as n from commissions where id = any(${ids}::bigint[]) and status <> 'approved'`;
    if (left!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`the sweep did not approve commissions ${ids.join(', ')}`);
    if (!round.more) await new Promise((r) => setTimeout(r, round.busy ? 50 : 200));
  }
}

/**
 * A bonus's commission as the sale path (or the bonuses API) awards it (lifecycle `awardBonuses`: no sale,
 * pending in the hold, its credit, `commission.created` with its bonus_id). Its id.
 */
export async function awardBonus(
  sql: Sql,
  p: Owner,
  award: { bonusId: number; period?: string; amountCents: number; currency: string; holdDays?: number },
): Promise<number> {
  return sql.begin(async (tx) => {
    const made = await lifecycle.awardBonuses(tx, [
      {
        bonus_id: award.bonusId,
        bonus_period: award.period ?? 'once',
        program_id: p.programId,
        partner_id: p.partnerId,
        partner_program_id: p.partnerProgramId,
        amount_cents: award.amountCents,
        currency: award.currency,
        group_id: null,
        at_ts: Date.now(),
        hold_days: award.holdDays ?? 0,
      },
    ]);
    if (made.rows.length !== 1) throw new Error(`bonus ${award.bonusId} was awarded already`);
    await recordCaused(tx, { kafkaPrefix: p.kafkaPrefix ?? SEED_PREFIX }, made.caused);
    return Number(made.rows[0]!.id);
  });
}

const deps = (sql: Sql, kafkaPrefix = SEED_PREFIX) => ({ sql, kafkaPrefix });

/** The commissions API's mark-paid (lifecycle `payAlone`): paid, its payment entry. */
export async function payAlone(sql: Sql, id: number, kafkaPrefix?: string): Promise<void> {
  if (!(await markCommissionPaid(deps(sql, kafkaPrefix), id))) throw new Error(`commission ${id} is gone`);
}

/** The commissions API's approve (lifecycle `approve`): the review hold cleared. */
export async function approveHeld(sql: Sql, id: number, kafkaPrefix?: string): Promise<void> {
  if (!(await approveCommission(deps(sql, kafkaPrefix), id))) throw new Error(`commission ${id} is gone`);
}

/** The commissions API's reject (lifecycle `reject`): reversed, its full deduction. */
export async function reject(sql: Sql, id: number, reason: string | null, kafkaPrefix?: string) {
  if (!(await rejectCommission(deps(sql, kafkaPrefix), id, reason)))
    throw new Error(`commission ${id} is gone`);
}

/**
 * A refund of the commission's sale as the reversal worker's step decides it (lifecycle `refund`:
 * `deductRefund`, or a clawback when paid), its deduction applied in the same transaction (the worker's is
 * published to the ledger worker after its commit). `refundCents` null: a full refund.
 */
export async function refund(
  sql: Sql,
  c: Pick<SeededCommission, 'saleId' | 'saleCents'>,
  refundCents: number | null,
  reason: string | null = 'refunded',
  kafkaPrefix = SEED_PREFIX,
): Promise<void> {
  await sql.begin(async (tx) => {
    const outcome = await lifecycle.refund(tx, c.saleId, {
      sale_cents: c.saleCents,
      refund_cents: refundCents,
      reason,
    });
    if (!outcome) throw new Error(`sale ${c.saleId} has no commission`);
    if ('refused' in outcome) throw new Error(`refund of sale ${c.saleId}: ${outcome.refused}`);
    await recordCaused(tx, { kafkaPrefix }, outcome.caused);
  });
}

/** The payouts API's creation (lifecycle `joinPayout`): the partners' payable commissions in new payouts. */
export async function createPayouts(
  sql: Sql,
  programId: number,
  partnerIds: number[] | null,
  kafkaPrefix?: string,
): Promise<number[]> {
  const rows = await createProgramPayouts(deps(sql, kafkaPrefix), programId, partnerIds);
  if (!rows) throw new Error(`program ${programId} is gone`);
  return rows.map((r) => Number(r.id));
}

/** The payouts API's mark paid (lifecycle `payInPayout`). */
export async function markPayoutPaid(sql: Sql, payoutId: number, reference: string | null = null) {
  if (!(await payPayout(deps(sql), payoutId, reference))) throw new Error(`payout ${payoutId} is gone`);
}

/** The payouts API's cancel (lifecycle `leavePayout`). */
export async function cancel(sql: Sql, payoutId: number) {
  if (!(await cancelPayout(deps(sql), payoutId))) throw new Error(`payout ${payoutId} is gone`);
}

/**
 * A commission's state for the lifecycle's pure rules (shared/commissions/states.ts): an approved, due
 * commission of 5.00 USD outside any payout, with what a test changes laid over it.
 */
export function commissionState(over: Partial<CommissionState> = {}): CommissionState {
  return {
    id: 11,
    status: 'approved',
    amount_cents: 500,
    deducted_cents: 0,
    currency: 'USD',
    partner_id: 3,
    partner_program_id: 4,
    program_id: 1,
    workspace_id: 1,
    transaction_id: 'order_1',
    review_reason: null,
    payout_id: null,
    paid_at: null,
    due: true,
    ...over,
  };
}
