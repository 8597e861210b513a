// The processor worker's applier: a verified processor event (Stripe, Paddle, Lemon Squeezy, Polar) becomes
// a sale, a refund, a subscription or payment link, or nothing, applied with the same sale and refund
// appliers as /track/sale and /track/refund, and its outcome recorded for the advertiser (processor_events).
// An event that refers to something not seen yet (a refund before its checkout, a renewal before its
// checkout link) waits, and is applied, in the same transaction, by the event that brings what it waited for.
import type { Tx } from '../../../shared/db/sql.ts';
import type { Effect, RefundCommand, SaleCommand } from '../../../shared/contracts/commands.ts';
import {
  parseProcessorEvent,
  processorOf,
  processorRequestId,
} from '../../../shared/contracts/processor-events.ts';
import type { ProcessorEventCommand } from '../../../shared/contracts/processor-events.ts';
import { interpretFor } from '../../../shared/processors/index.ts';
import type { Processor } from '../../../shared/processors/index.ts';
import type { Attribution, ProcessorAction } from '../../../shared/processors/common.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../../shared/pipeline/command-handler.ts';
import { isCurrencyMismatch } from '../../../shared/domain/money.ts';

export type ProcessorOutcome =
  'attributed' | 'recorded' | 'unattributed' | 'refund_applied' | 'linked' | 'waiting' | 'ignored' | 'failed';

interface Result {
  outcome: ProcessorOutcome;
  reason: string | null;
  transaction_id?: string | null;
  sale_id?: number | null;
  commission_id?: number | null;
  waiting_for?: string | null;
  effects?: Effect[];
  /** Waiting events this one may release ('payment:pi_…', 'invoice:in_…', 'subscription:sub_…'). */
  releases?: string[];
}

/** How many waiting events one event may release in a chain (each released one may release more). */
const MAX_RELEASE_DEPTH = 4;

export function createProcessorEventApplier(
  sale: CommandApplier<SaleCommand>,
  refund: CommandApplier<RefundCommand>,
): CommandApplier<ProcessorEventCommand> {
  async function decide(tx: Tx, cmd: ProcessorEventCommand, ctx: ApplyContext): Promise<Result> {
    const isTest = !cmd.livemode;
    const plan = planEvent(cmd);
    if ('result' in plan) return plan.result;
    if ('sale' in plan) return saleResult(plan.action, await sale.apply(tx, plan.sale, ctx), isTest);
    const { action } = plan;
    switch (action.kind) {
      case 'link': {
        await tx`
          insert into processor_subscriptions (program_id, subscription_id, processor_customer_id, customer_key, click_id)
          values (${cmd.program_id}, ${action.subscription_id}, ${action.processor_customer_id},
                  ${action.attribution.customer_key}, ${action.attribution.click_id})
          on conflict do nothing`;
        return {
          outcome: 'linked',
          reason: 'subscription',
          releases: [`subscription:${action.subscription_id}`],
        };
      }

      case 'link_payment': {
        await tx`
          insert into processor_invoice_payments (program_id, payment_intent, invoice_id)
          values (${cmd.program_id}, ${action.payment_intent}, ${action.invoice_id})
          on conflict do nothing`;
        return {
          outcome: 'linked',
          reason: 'invoice_payment',
          releases: [`payment:${action.payment_intent}`],
        };
      }

      case 'sale': {
        // Paddle, Polar: a subscription's attributed payment also remembers whose subscription it is.
        if (action.remember_subscription && names(action.attribution))
          return rememberingSale(tx, cmd, action, ctx, isTest);
        // A renewal without metadata: attributed through the link remembered at its checkout.
        const subscriptionId = action.subscription_id!;
        await lockKeys(tx, cmd.program_id, [`subscription:${subscriptionId}`]);
        const [link] = await tx<{ customer_key: string | null; click_id: string | null }[]>`
          select customer_key, click_id from processor_subscriptions
          where program_id = ${cmd.program_id} and subscription_id = ${subscriptionId}`;
        if (!link)
          return {
            outcome: 'waiting',
            reason: 'subscription_link',
            waiting_for: `subscription:${subscriptionId}`,
          };
        const linked = attributed(cmd, action, { ...link, program_id: null });
        if ('result' in linked) return linked.result;
        return saleResult(action, await sale.apply(tx, linked.sale, ctx), isTest);
      }

      case 'refund': {
        // The sale of this charge: a checkout's payment intent, a 2025+ invoice through invoice_payment.paid,
        // or an older charge's invoice.
        const waitingFor = action.payment_intent
          ? `payment:${action.payment_intent}`
          : `invoice:${action.invoice_id}`;
        await lockKeys(tx, cmd.program_id, [waitingFor]);
        const candidates: string[] = [];
        if (action.payment_intent) candidates.push(action.payment_intent);
        if (action.invoice_id) candidates.push(action.invoice_id);
        if (action.payment_intent) {
          const [link] = await tx<{ invoice_id: string }[]>`
            select invoice_id from processor_invoice_payments
            where program_id = ${cmd.program_id} and payment_intent = ${action.payment_intent}`;
          if (link) candidates.push(link.invoice_id);
        }
        const [found] = await tx<{ transaction_id: string; is_test: boolean }[]>`
          select transaction_id, is_test from sales
          where program_id = ${cmd.program_id} and transaction_id = any(${candidates})
          order by array_position(${candidates}::text[], transaction_id) limit 1`;
        if (!found) {
          return { outcome: 'waiting', reason: 'sale', waiting_for: waitingFor };
        }
        if (found.is_test || isTest)
          return { outcome: 'ignored', reason: 'test_mode', transaction_id: found.transaction_id };
        const refundCmd: RefundCommand = {
          v: 1,
          type: 'refund',
          request_id: cmd.request_id,
          ts: cmd.ts,
          program_id: cmd.program_id,
          transaction_id: found.transaction_id,
          refund_amount_cents: action.refund_amount_cents,
          refund_reason: `processor refund of ${action.charge_id}`,
        };
        const applied = await refund.apply(tx, refundCmd, ctx);
        const body = applied.body as { status?: string; commission_id?: number; error?: string };
        if (applied.statusCode !== 200)
          return {
            outcome: 'failed',
            reason: body.error ?? 'refund rejected',
            transaction_id: found.transaction_id,
          };
        return {
          outcome: 'refund_applied',
          reason: body.status ?? null,
          transaction_id: found.transaction_id,
          commission_id: body.commission_id ?? null,
          effects: applied.effects ?? [],
        };
      }
    }
  }

  const record = (tx: Tx, cmd: ProcessorEventCommand, r: Result) => recordAll(tx, [cmd], [r]);

  /** The sale, then the subscription's link (renewals without custom data attribute through it). */
  async function rememberingSale(
    tx: Tx,
    cmd: ProcessorEventCommand,
    action: SaleAction,
    ctx: ApplyContext,
    isTest: boolean,
  ): Promise<Result> {
    const planned = attributed(cmd, action, action.attribution);
    if ('result' in planned) return planned.result;
    const r = saleResult(action, await sale.apply(tx, planned.sale, ctx), isTest);
    const subscriptionId = action.subscription_id!;
    const a = action.attribution!;
    await tx`
      insert into processor_subscriptions (program_id, subscription_id, processor_customer_id, customer_key, click_id)
      values (${cmd.program_id}, ${subscriptionId}, ${action.processor_customer_id ?? null},
              ${a.customer_key}, ${a.click_id})
      on conflict do nothing`;
    return { ...r, releases: [...(r.releases ?? []), `subscription:${subscriptionId}`] };
  }

  /** Applies the events waiting for `keys`, and those they release in turn; returns their effects. */
  async function release(
    tx: Tx,
    programId: number,
    keys: string[],
    ctx: ApplyContext,
    depth: number,
  ): Promise<Effect[]> {
    if (keys.length === 0 || depth > MAX_RELEASE_DEPTH) return [];
    await lockKeys(tx, programId, keys);
    const waiting = await tx<
      {
        processor: Processor;
        event_id: string;
        type: string;
        livemode: boolean;
        received_at: Date;
        payload: string;
      }[]
    >`
      select processor, event_id, type, livemode, received_at, payload::text as payload from processor_events
      where program_id = ${programId} and outcome = 'waiting' and waiting_for = any(${keys})
      order by received_at, id
      for update`;
    const effects: Effect[] = [];
    for (const w of waiting) {
      const cmd: ProcessorEventCommand = {
        v: 1,
        type: 'processor_event',
        request_id: processorRequestId(programId, w.event_id, w.processor),
        ts: w.received_at.getTime(),
        ...(w.processor === 'stripe' ? {} : { processor: w.processor }),
        program_id: programId,
        event_id: w.event_id,
        event_type: w.type,
        livemode: w.livemode,
        payload: w.payload,
      };
      const r = await decide(tx, cmd, ctx);
      if (r.outcome === 'waiting') continue;
      await record(tx, cmd, r);
      effects.push(...(r.effects ?? []), ...(await release(tx, programId, r.releases ?? [], ctx, depth + 1)));
    }
    return effects;
  }

  async function apply(tx: Tx, cmd: ProcessorEventCommand, ctx: ApplyContext): Promise<Applied> {
    const r = await decide(tx, cmd, ctx);
    await record(tx, cmd, r);
    const released = await release(tx, cmd.program_id, r.releases ?? [], ctx, 1);
    return answer(cmd, r, released);
  }

  /**
   * The set-based form, for a chunk whose every event is decided by its payload alone (sales whose metadata
   * names the customer, events with nothing to apply): its sales in one call of the sale applier's
   * set-based form, its outcomes in one statement, then the events they release, per program. A chunk with
   * anything else (links, refunds, a renewal attributed through its checkout) is applied event by event.
   */
  async function applyBatch(tx: Tx, cmds: ProcessorEventCommand[], ctx: ApplyContext): Promise<Applied[]> {
    const plans = cmds.map(planEvent).filter((p): p is QuickPlan => 'result' in p || 'sale' in p);
    if (plans.length < cmds.length) {
      const out: Applied[] = [];
      for (const cmd of cmds) out.push(await apply(tx, cmd, ctx));
      return out;
    }
    const sales = plans.flatMap((p) => ('sale' in p ? [p.sale] : []));
    const applied = sales.length === 0 ? [] : await applyAll(sale, tx, sales, ctx);
    let next = 0;
    const results = plans.map((p, i) =>
      'sale' in p ? saleResult(p.action, applied[next++]!, !cmds[i]!.livemode) : p.result,
    );
    await recordAll(tx, cmds, results);
    // What the per-event form releases right after each sale, released after all of them: a waiting event
    // finds the same sales either way. Their effects go with the program's last event of the chunk.
    const released = new Map<number, Effect[]>();
    for (const programId of new Set(cmds.map((c) => c.program_id))) {
      const keys = results.flatMap((r, i) => (cmds[i]!.program_id === programId ? (r.releases ?? []) : []));
      released.set(programId, await release(tx, programId, [...new Set(keys)], ctx, 1));
    }
    const last = new Map(cmds.map((c, i) => [c.program_id, i]));
    return cmds.map((cmd, i) =>
      answer(cmd, results[i]!, last.get(cmd.program_id) === i ? released.get(cmd.program_id)! : []),
    );
  }

  return { kind: 'processor_event', parse: parseProcessorEvent, apply, applyBatch };
}

function answer(cmd: ProcessorEventCommand, r: Result, released: Effect[]): Applied {
  return {
    programId: cmd.program_id,
    statusCode: 200,
    body: { received: true, outcome: r.outcome, reason: r.reason },
    effects: [...(r.effects ?? []), ...released],
  };
}

/** The sale applier's set-based form when it has one, else its commands one by one. */
async function applyAll(
  sale: CommandApplier<SaleCommand>,
  tx: Tx,
  cmds: SaleCommand[],
  ctx: ApplyContext,
): Promise<Applied[]> {
  if (sale.applyBatch) return sale.applyBatch(tx, cmds, ctx);
  const out: Applied[] = [];
  for (const cmd of cmds) out.push(await sale.apply(tx, cmd, ctx));
  return out;
}

/** Records events' outcomes (upserted by event id) in one statement: an array per column; booleans as text, as insertSales does. */
async function recordAll(tx: Tx, cmds: ProcessorEventCommand[], results: Result[]): Promise<void> {
  const col = <T>(f: (c: ProcessorEventCommand, r: Result) => T) => cmds.map((c, i) => f(c, results[i]!));
  await tx`
    insert into processor_events (program_id, event_id, type, livemode, received_at, outcome, reason,
                                  transaction_id, sale_id, commission_id, waiting_for, payload, processor)
    select p, e, t, l::boolean, ra, o, re, tr, s, cm, w, pl::jsonb, pr
    from unnest(${col((c) => c.program_id)}::bigint[], ${col((c) => c.event_id)}::text[],
                ${col((c) => c.event_type)}::text[], ${col((c) => String(c.livemode))}::text[],
                ${col((c) => new Date(c.ts).toISOString())}::timestamptz[], ${col((_, r) => r.outcome)}::text[],
                ${col((_, r) => r.reason)}::text[], ${col((_, r) => r.transaction_id ?? null)}::text[],
                ${col((_, r) => r.sale_id ?? null)}::bigint[], ${col((_, r) => r.commission_id ?? null)}::bigint[],
                ${col((_, r) => r.waiting_for ?? null)}::text[], ${col((c) => c.payload)}::text[],
                ${col((c) => processorOf(c))}::text[])
      as v(p, e, t, l, ra, o, re, tr, s, cm, w, pl, pr)
    on conflict (program_id, processor, event_id) do update set
      outcome = excluded.outcome, reason = excluded.reason, transaction_id = excluded.transaction_id,
      sale_id = excluded.sale_id, commission_id = excluded.commission_id, waiting_for = excluded.waiting_for,
      applied_at = now()`;
}

type SaleAction = Extract<ProcessorAction, { kind: 'sale' }>;

/**
 * What an event needs, decided from its payload alone: its result (nothing to write but its outcome), the
 * sale command to apply, or, for what needs Postgres to decide (links, refunds, a renewal attributed
 * through its checkout's link), the action.
 */
type Decided = { result: Result };
type SalePlan = { sale: SaleCommand; action: SaleAction };
type Plan = Decided | SalePlan | { action: Exclude<ProcessorAction, { kind: 'ignored' }> };
/** A plan that needs nothing from Postgres to decide. */
type QuickPlan = Decided | SalePlan;

function planEvent(cmd: ProcessorEventCommand): Plan {
  let event: unknown;
  try {
    event = JSON.parse(cmd.payload);
  } catch {
    return { result: { outcome: 'failed', reason: 'payload is not JSON' } };
  }
  const action = interpretFor(processorOf(cmd), event);
  if (action.kind === 'ignored') return { result: { outcome: 'ignored', reason: action.reason } };
  if (action.kind === 'link' && mismatch(action.attribution, cmd.program_id))
    return { result: { outcome: 'unattributed', reason: 'program_mismatch' } };
  if (action.kind !== 'sale') return { action };
  if (action.remember_subscription) {
    // Paddle, Polar: an attributed payment links its subscription; a renewal without custom data waits
    // for that link; a first payment without custom data has none to wait for.
    if (names(action.attribution)) return { action };
    if (!action.is_recurring) return attributed(cmd, action, action.attribution);
  }
  if (!action.attribution && action.subscription_id) return { action };
  return attributed(cmd, action, action.attribution);
}

/** The sale command of a sale event with this attribution, or why it has none. */
function attributed(
  cmd: ProcessorEventCommand,
  action: SaleAction,
  attribution: Attribution | null,
): Decided | SalePlan {
  const transaction_id = action.transaction_id;
  const coupon = {
    ...(action.coupon_code ? { coupon_code: action.coupon_code } : {}),
    ...(action.coupon_refs ? { coupon_refs: action.coupon_refs } : {}),
  };
  // A sale that names a partner code but no customer: the code attributes it, to the processor's customer.
  if (!names(attribution) && Object.keys(coupon).length > 0 && action.processor_customer_id)
    attribution = {
      customer_key: action.processor_customer_id,
      click_id: null,
      program_id: attribution?.program_id ?? null,
    };
  if (!attribution || (!attribution.customer_key && !attribution.click_id))
    return { result: { outcome: 'unattributed', reason: 'no_metadata', transaction_id } };
  if (mismatch(attribution, cmd.program_id))
    return { result: { outcome: 'unattributed', reason: 'program_mismatch', transaction_id } };
  return {
    action,
    sale: {
      v: 1,
      type: 'sale',
      request_id: cmd.request_id,
      ts: cmd.ts,
      program_id: cmd.program_id,
      transaction_id,
      amount_cents: action.amount_cents,
      currency: action.currency,
      customer_key: attribution.customer_key,
      click_id: attribution.customer_key ? null : attribution.click_id,
      sale_type: action.sale_type === 'subscription' ? 'subscription' : 'payment',
      line_items: null,
      is_recurring: action.is_recurring,
      subscription_id: action.subscription_id,
      subscription_interval: null,
      product_id: null,
      is_test: !cmd.livemode,
      ...coupon,
    },
  };
}

/** The event's outcome from the sale applier's answer (the same answer /track/sale would have given). */
function saleResult(action: SaleAction, applied: Applied, isTest: boolean): Result {
  const base = { transaction_id: action.transaction_id, effects: applied.effects ?? [] };
  const body = applied.body as {
    sale_id?: number;
    commission_id?: number | null;
    message?: string;
    error?: string;
  };
  if (applied.statusCode === 409) return { ...base, outcome: 'ignored', reason: 'already_recorded' };
  // Amounts of different currencies are never added together: recorded, not applied.
  if (applied.statusCode === 400 && isCurrencyMismatch(body.error))
    return { ...base, outcome: 'unattributed', reason: 'currency_mismatch' };
  if (applied.statusCode !== 200) {
    const reason = /customer not found/i.test(body.error ?? '')
      ? 'customer_not_found'
      : (body.error ?? 'rejected');
    return { ...base, outcome: 'unattributed', reason };
  }
  const releases = [`payment:${action.transaction_id}`];
  if (action.payment_intent) releases.push(`payment:${action.payment_intent}`);
  if (action.invoice_id) releases.push(`invoice:${action.invoice_id}`);
  if (isTest) return { ...base, outcome: 'recorded', reason: 'test_mode', releases };
  if (body.commission_id)
    return {
      ...base,
      outcome: 'attributed',
      reason: null,
      sale_id: body.sale_id ?? null,
      commission_id: body.commission_id,
      releases,
    };
  return {
    ...base,
    outcome: 'recorded',
    reason: body.message ?? 'no_commission',
    sale_id: body.sale_id ?? null,
    releases,
  };
}

/**
 * Serialises deciding to wait for a key with releasing it: the waiting event and the one that releases it
 * may be on different partitions, and without the lock the release could look before the wait commits.
 * Transaction-scoped, taken in key order.
 */
async function lockKeys(tx: Tx, programId: number, keys: string[]): Promise<void> {
  await tx`
    select pg_advisory_xact_lock(hashtextextended(${programId} || ':' || k, 0))
    from (select distinct k from unnest(${keys}::text[]) k order by k) keys`;
}

/** Whether the custom data names a customer (a customer key or a click). */
const names = (a: Attribution | null | undefined): boolean => !!a && !!(a.customer_key || a.click_id);

/** `metadata.program_id`, when present, must name the webhook's program. */
function mismatch(a: Attribution | null, programId: number): boolean {
  return a !== null && a.program_id !== null && a.program_id !== String(programId);
}
