// Applying a page's customers and commissions (docs/importing.md "Mapping", "Twice is once"), in the page's
// transaction. A customer is keyed by its Stripe customer id (customers.customer_key), so the processor's
// later events and code sales find it; a commission arrives with a sale of its own (sales.import_id) in the
// state it had at the source, through the lifecycle (createImported: its ledger entries, no event, no
// mail), counted in the rollups on its sale's day and in its partner–customer pair. A commission that
// matches a sale tracked here already (same customer, same amount, within an hour) is `already_tracked`.
import type { Tx } from '../db/sql.ts';
import * as lifecycle from '../commissions/lifecycle.ts';
import { recordCaused } from '../commissions/caused.ts';
import type { Caused } from '../commissions/caused.ts';
import { payableAt } from '../commissions/states.ts';
import type { CommissionStatus } from '../commissions/states.ts';
import { RollupBuffer } from '../rollups/dal.ts';
import { customerKeys } from '../rollups/rules.ts';
import { findRefs, fingerprint, saveRefs } from './refs.ts';
import type { ImportScope, PageResult } from './refs.ts';
import { partnersOf } from './apply-partners.ts';
import type { SourceCommission, SourceCustomer } from './types.ts';

const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]+$/;

type Resolved = { id: number; linkId: number | null } | 'dry';

/**
 * Upserts the customers (the page's own, and those its commissions embed), counting those of `count`;
 * returns what each external id resolved to (absent: not brought, with its error row when counted).
 */
export async function applyCustomers(
  tx: Tx,
  s: ImportScope,
  r: PageResult,
  customers: SourceCustomer[],
  count: boolean,
): Promise<Map<string, Resolved>> {
  const out = new Map<string, Resolved>();
  const unique = [...new Map(customers.map((c) => [c.external_id, c])).values()];
  const refs = await findRefs(
    tx,
    s,
    'customer',
    unique.map((c) => c.external_id),
  );
  const partners = await partnersOf(
    tx,
    s,
    unique.flatMap((c) => c.partner_external_id ?? []),
  );
  const fail = (c: SourceCustomer, code: string, message: string) => {
    if (count) r.error({ kind: 'customer', external_id: c.external_id, code, message }, 'failed');
  };
  const todo: { c: SourceCustomer; pp: { ppId: number; partnerId: number } | 'dry' }[] = [];
  for (const c of unique) {
    const ref = refs.get(c.external_id);
    if (ref) {
      out.set(c.external_id, ref.local_id === 0 ? 'dry' : { id: ref.local_id, linkId: null });
      if (count) r.count('customer', 'skipped');
      continue;
    }
    if (c.stripe_customer_id === null || !STRIPE_CUSTOMER.test(c.stripe_customer_id)) {
      fail(
        c,
        'customer_not_found',
        c.stripe_customer_id === null
          ? `Referral ${c.external_id} names no Stripe customer`
          : `Referral ${c.external_id}: ${c.stripe_customer_id} is not a Stripe customer id (cus_…)`,
      );
      continue;
    }
    const pp = c.partner_external_id === null ? undefined : partners.get(c.partner_external_id);
    if (pp === undefined) {
      fail(c, 'partner_not_found', `Referral ${c.external_id}: its partner was not imported`);
      continue;
    }
    todo.push({ c, pp });
  }
  if (todo.length === 0) return out;
  const keys = todo.map((t) => t.c.stripe_customer_id!);
  const saved: { external_id: string; local_id: number; fingerprint: string }[] = [];
  if (s.dryRun) {
    const known = new Set(
      (
        await tx<{ customer_key: string }[]>`
          select customer_key from customers where program_id = ${s.programId} and customer_key = any(${keys}::text[])`
      ).map((x) => x.customer_key),
    );
    for (const { c } of todo) {
      out.set(c.external_id, 'dry');
      saved.push({ external_id: c.external_id, local_id: 0, fingerprint: '' });
      if (count) r.count('customer', known.has(c.stripe_customer_id!) ? 'updated' : 'created');
    }
    await saveRefs(tx, s, 'customer', saved);
    return out;
  }
  const real = todo as { c: SourceCustomer; pp: { ppId: number; partnerId: number } }[];
  // The link each came through, when the source says and it was imported.
  const linkCodes = real.flatMap((t) => t.c.link_code ?? []);
  const links = new Map(
    linkCodes.length === 0
      ? []
      : (
          await tx<{ id: string; short_link: string; partner_program_id: string }[]>`
            select id, short_link, partner_program_id from referral_links
            where program_id = ${s.programId} and short_link = any(${linkCodes}::text[])`
        ).map((l) => [l.short_link, l]),
  );
  const linkOf = (t: (typeof real)[number]) => {
    const l = t.c.link_code === null ? undefined : links.get(t.c.link_code);
    return l && Number(l.partner_program_id) === t.pp.ppId ? Number(l.id) : null;
  };
  const inserted = await tx<{ id: string; customer_key: string }[]>`
    insert into customers (program_id, partner_id, partner_program_id, link_id, customer_status, customer_key,
                           email, signup_date, created_at, updated_at)
    select ${s.programId}, pa, pp, l, st, k, e, sd, coalesce(sd, now()), now()
    from unnest(${real.map((t) => t.pp.partnerId)}::bigint[], ${real.map((t) => t.pp.ppId)}::bigint[],
                ${real.map(linkOf)}::bigint[], ${real.map((t) => t.c.status)}::text[], ${real.map((t) => t.c.stripe_customer_id)}::text[],
                ${real.map((t) => t.c.email)}::text[], ${real.map((t) => t.c.created_at?.toISOString() ?? null)}::timestamptz[])
      as v(pa, pp, l, st, k, e, sd)
    on conflict (program_id, customer_key) do nothing
    returning id, customer_key`;
  const created = new Map(inserted.map((x) => [x.customer_key, Number(x.id)]));
  // Customers the program knew already (tracked here, or by another source): taken as they are; one
  // without a partner gets the source's.
  const existing = new Map(
    (
      await tx<
        { id: string; customer_key: string; partner_program_id: string | null; link_id: string | null }[]
      >`
        update customers c set
          partner_id = coalesce(c.partner_id, v.pa), partner_program_id = coalesce(c.partner_program_id, v.pp),
          updated_at = case when c.partner_program_id is null then now() else c.updated_at end
        from unnest(${real.map((t) => t.c.stripe_customer_id)}::text[], ${real.map((t) => t.pp.partnerId)}::bigint[],
                    ${real.map((t) => t.pp.ppId)}::bigint[]) as v(k, pa, pp)
        where c.program_id = ${s.programId} and c.customer_key = v.k and not (c.id = any(${[...created.values()]}::bigint[]))
        returning c.id, c.customer_key, c.partner_program_id, c.link_id`
    ).map((x) => [x.customer_key, x]),
  );
  for (const t of real) {
    const key = t.c.stripe_customer_id!;
    const id = created.get(key) ?? Number(existing.get(key)?.id);
    if (!Number.isSafeInteger(id)) continue;
    out.set(t.c.external_id, {
      id,
      linkId: created.has(key) ? linkOf(t) : Number(existing.get(key)!.link_id) || null,
    });
    saved.push({ external_id: t.c.external_id, local_id: id, fingerprint: fingerprint(key) });
    if (count) r.count('customer', created.has(key) ? 'created' : 'updated');
  }
  await saveRefs(tx, s, 'customer', saved);
  return out;
}

/**
 * What a rerun does to a commission imported before that was paid or voided at the source since: the
 * lifecycle's payAlone or reject (a commission held, or in a payout, is refused and left as it is). A dry
 * run only says whether it would try.
 */
async function syncState(
  tx: Tx,
  s: ImportScope,
  id: number,
  c: SourceCommission,
  now: CommissionStatus,
): Promise<{ changed: boolean; caused?: Caused }> {
  const target = c.state === 'paid' ? 'paid' : c.state === 'rejected' ? 'reversed' : null;
  if (target === null || now === target || (now !== 'pending' && now !== 'approved'))
    return { changed: false };
  if (s.dryRun) return { changed: true };
  const o =
    target === 'paid'
      ? await lifecycle.payAlone(tx, id, c.paid_at ?? 'now')
      : await lifecycle.reject(tx, id, s.label);
  if (!o || 'refused' in o) return { changed: false };
  return { changed: true, caused: o.caused };
}

export async function applyCommissions(tx: Tx, s: ImportScope, r: PageResult, given: SourceCommission[]) {
  // Each once, should a source list one twice on a page.
  const commissions = [...new Map(given.map((c) => [c.external_id, c])).values()];
  const refs = await findRefs(
    tx,
    s,
    'commission',
    commissions.map((c) => c.external_id),
  );
  const customers = await applyCustomers(
    tx,
    s,
    r,
    commissions.flatMap((c) => c.customer ?? []),
    false,
  );
  const partners = await partnersOf(
    tx,
    s,
    commissions.map((c) => c.partner_external_id),
  );
  const known = await tx<{ id: string; status: CommissionStatus }[]>`
    select id, status from commissions where id = any(${[...refs.values()].map((x) => x.local_id)}::bigint[])`;
  const statusOf = new Map(known.map((k) => [Number(k.id), k.status]));
  const caused: Caused[] = [];
  const fresh: {
    c: SourceCommission;
    pp: { ppId: number; partnerId: number; groupId: number } | 'dry';
    customer: Resolved;
  }[] = [];
  const savedUpdates: { external_id: string; local_id: number; fingerprint: string }[] = [];
  for (const c of commissions) {
    const fail = (code: string, message: string, outcome: 'failed' | 'skipped' = 'failed') =>
      r.error({ kind: 'commission', external_id: c.external_id, code, message }, outcome);
    const ref = refs.get(c.external_id);
    if (ref) {
      const now = statusOf.get(ref.local_id);
      const synced = now === undefined ? { changed: false } : await syncState(tx, s, ref.local_id, c, now);
      if (synced.caused) caused.push(synced.caused);
      r.count('commission', synced.changed ? 'updated' : 'skipped');
      if (synced.changed)
        savedUpdates.push({ external_id: c.external_id, local_id: ref.local_id, fingerprint: c.state });
      continue;
    }
    if (c.currency.trim().toUpperCase() !== s.currency) {
      fail('currency_mismatch', `In ${c.currency.toUpperCase()}; the program's currency is ${s.currency}`);
      continue;
    }
    const pp = partners.get(c.partner_external_id);
    if (pp === undefined) {
      fail('partner_not_found', `Its partner ${c.partner_external_id} was not imported`);
      continue;
    }
    const customer = c.customer === null ? undefined : customers.get(c.customer.external_id);
    if (customer === undefined) {
      fail(
        'customer_not_found',
        c.customer === null
          ? 'Its sale names no customer'
          : `Its customer ${c.customer.stripe_customer_id ?? c.customer.external_id} has no Stripe customer id (cus_…) or was not imported`,
      );
      continue;
    }
    fresh.push({ c, pp, customer });
  }
  // Sales tracked here already: the same customer (or its subscription's Stripe customer), the same amount,
  // within an hour of the source's sale.
  const real = fresh.filter((f) => f.customer !== 'dry') as ((typeof fresh)[number] & {
    customer: { id: number; linkId: number | null };
  })[];
  const tracked = new Set(
    real.length === 0
      ? []
      : (
          await tx<{ i: number }[]>`
            select v.i from unnest(${real.map((_, i) => i)}::int[], ${real.map((f) => f.customer.id)}::bigint[],
                                   ${real.map((f) => f.c.customer?.stripe_customer_id ?? null)}::text[],
                                   ${real.map((f) => f.c.sale_amount_cents)}::bigint[],
                                   ${real.map((f) => f.c.sale_at.toISOString())}::timestamptz[]) as v(i, cu, st, a, at)
            where exists (
              select 1 from sales s
              where s.program_id = ${s.programId} and s.import_id is null and not s.is_test and s.amount_cents = v.a
                and s.sale_date between v.at - interval '1 hour' and v.at + interval '1 hour'
                and (s.customer_id = v.cu or s.subscription_id in (
                       select ps.subscription_id from processor_subscriptions ps
                       where ps.program_id = ${s.programId} and ps.processor_customer_id = v.st)))`
        ).map((x) => x.i),
  );
  const create = fresh.filter((f) => {
    const i = real.indexOf(f as (typeof real)[number]);
    if (i < 0 || !tracked.has(i)) return true;
    r.error(
      {
        kind: 'commission',
        external_id: f.c.external_id,
        code: 'already_tracked',
        message: `A sale of ${f.c.sale_amount_cents} cents of this customer within an hour of ${f.c.sale_at.toISOString()} is tracked here already`,
      },
      'skipped',
    );
    return false;
  });
  if (s.dryRun) {
    r.count('commission', 'created', create.length);
    await saveRefs(
      tx,
      s,
      'commission',
      create.map((f) => ({ external_id: f.c.external_id, local_id: 0, fingerprint: f.c.state })),
    );
    return;
  }
  const rows = create as (typeof real)[number][];
  if (rows.length > 0) await createCommissions(tx, s, rows, caused);
  r.count('commission', 'created', rows.length);
  await saveRefs(tx, s, 'commission', savedUpdates);
  // Their ledger entries (in this transaction, as every transition outside the command path); nothing
  // announced, nobody notified: history (docs/importing.md "Events and mail").
  const ledger = caused.flatMap((c) => c.ledger);
  if (ledger.length > 0)
    await recordCaused(tx, { kafkaPrefix: s.kafkaPrefix }, { ledger, events: [], notifications: [] });
}

async function createCommissions(
  tx: Tx,
  s: ImportScope,
  rows: {
    c: SourceCommission;
    pp: { ppId: number; partnerId: number; groupId: number } | 'dry';
    customer: { id: number; linkId: number | null };
  }[],
  caused: Caused[],
) {
  const real = rows as {
    c: SourceCommission;
    pp: { ppId: number; partnerId: number; groupId: number };
    customer: { id: number; linkId: number | null };
  }[];
  // The customers' rows locked in id order, as a chunk of sales locks them: the pairs written below are
  // read and written by sales under these locks.
  const customerIds = [...new Set(real.map((f) => f.customer.id))].sort((a, b) => a - b);
  await tx`select 1 from customers where id = any(${customerIds}::bigint[]) order by id for no key update`;
  const holds = new Map(
    (
      await tx<{ id: string; hold_days: number | null }[]>`
        select id, hold_days from program_groups where id = any(${[...new Set(real.map((f) => f.pp.groupId))]}::bigint[])`
    ).map((g) => [Number(g.id), g.hold_days]),
  );
  const keyOf = (f: (typeof real)[number]) => {
    const k = customerKeys({
      partner_id: String(f.pp.partnerId),
      link_id: f.customer.linkId === null ? null : String(f.customer.linkId),
      attr_country: null,
      attr_device: null,
      attr_browser: null,
      attr_os: null,
      attr_referrer: null,
      attr_landing_page: null,
    });
    return k;
  };
  const sales = await tx<{ id: string; request_id: string }[]>`
    insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, customer_key,
                       transaction_id, amount_cents, currency, sale_type, payment_status, sale_date, partner_key,
                       link_key, import_id)
    select r, ${s.programId}, c, pa, pp, k, t, a, ${s.currency}, 'payment', 'paid', sd, pk, lk, ${s.importId}
    from unnest(${real.map((f) => `import:${s.programId}:${s.source}:${f.c.external_id}`)}::text[],
                ${real.map((f) => f.customer.id)}::bigint[], ${real.map((f) => f.pp.partnerId)}::bigint[],
                ${real.map((f) => f.pp.ppId)}::bigint[], ${real.map((f) => f.c.customer?.stripe_customer_id ?? null)}::text[],
                ${real.map((f) => `imp_${s.programId}_${s.source}_${f.c.external_id}`)}::text[],
                ${real.map((f) => f.c.sale_amount_cents)}::bigint[], ${real.map((f) => f.c.sale_at.toISOString())}::timestamptz[],
                ${real.map((f) => keyOf(f).partner!)}::text[], ${real.map((f) => keyOf(f).link!)}::text[])
      as v(r, c, pa, pp, k, t, a, sd, pk, lk)
    returning id, request_id`;
  const saleOf = new Map(sales.map((x) => [x.request_id, Number(x.id)]));
  const items = real.map((f) => {
    const hold = holds.get(f.pp.groupId) ?? s.holdDays;
    return {
      sale_id: saleOf.get(`import:${s.programId}:${s.source}:${f.c.external_id}`)!,
      program_id: s.programId,
      partner_id: f.pp.partnerId,
      partner_program_id: f.pp.ppId,
      customer_id: f.customer.id,
      amount_cents: f.c.amount_cents,
      currency: s.currency,
      payable_at: f.c.due_at?.toISOString() ?? payableAt(f.c.sale_at.getTime(), hold),
      group_id: f.pp.groupId,
      rule: {
        source: 'imported' as const,
        type: 'flat' as const,
        percent: null,
        amount_cents: f.c.amount_cents,
      },
      created_at: f.c.sale_at,
      state: f.c.state,
      paid_at: f.c.state === 'paid' ? (f.c.paid_at ?? f.c.sale_at) : null,
    };
  });
  const made = await lifecycle.createImported(tx, items, s.label);
  caused.push(made.caused);
  const bySale = new Map(made.rows.map((m) => [Number(m.sale_id), Number(m.id)]));
  await saveRefs(
    tx,
    s,
    'commission',
    real.map((f, i) => ({
      external_id: f.c.external_id,
      local_id: bySale.get(items[i]!.sale_id)!,
      fingerprint: f.c.state,
    })),
  );
  // The pairs: their commissions so far (stepped rates, recurring months), first and last.
  await tx`
    insert into partner_customers (customer_id, partner_program_id, commissions, first_commission_at, last_sale_at)
    select cu, pp, count(*), min(at), max(at)
    from unnest(${real.map((f) => f.customer.id)}::bigint[], ${real.map((f) => f.pp.ppId)}::bigint[],
                ${real.map((f) => f.c.sale_at.toISOString())}::timestamptz[]) as v(cu, pp, at)
    group by cu, pp
    order by cu, pp
    on conflict (customer_id, partner_program_id) do update set
      commissions = partner_customers.commissions + excluded.commissions,
      first_commission_at = least(partner_customers.first_commission_at, excluded.first_commission_at),
      last_sale_at = greatest(partner_customers.last_sale_at, excluded.last_sale_at)`;
  // The rollups count the history on its sale's day, as a sale tracked that day would have counted.
  const rollups = new RollupBuffer();
  for (const f of real)
    rollups.add(
      s.programId,
      f.c.sale_at.getTime(),
      { sales: 1, revenue_cents: f.c.sale_amount_cents, commission_cents: f.c.amount_cents },
      keyOf(f),
    );
  await rollups.flush(tx);
}
