// Dub Partners (dub.co/docs/api-reference): a Bearer API key; lists are JSON arrays paged by cursor
// (`startingAfter` the last id, `pageSize` at most 100; a short page is the last). Read in steps: groups →
// groups, partners → partners and their links (`key` as the link code), discount codes → partner codes,
// customers → customers (by `stripeCustomerId`), then commissions one status at a time (the list is
// filtered by `status`): pending and processed → pending and approved, paid → paid, canceled, fraud and
// duplicate → rejected. docs/importing.md "Dub".
import type { ImportedState } from '../../commissions/states.ts';
import type { FetchContext, Page, RowError, SourceAdapter } from '../types.ts';
import { date, int, list, num, obj, secretField, selected, str } from './common.ts';
import type { Obj } from './common.ts';

const PAGE_SIZE = 100;

/** The commission statuses read, each a step of its own, and what each becomes. */
const STATUSES: [string, ImportedState][] = [
  ['pending', 'pending'],
  ['processed', 'approved'],
  ['paid', 'paid'],
  ['canceled', 'rejected'],
  ['fraud', 'rejected'],
  ['duplicate', 'rejected'],
];

/** A group's sale reward as a commission policy (the importer checks it). */
export function groupPolicy(g: Obj): unknown {
  const reward = obj(g.saleReward);
  const rate =
    reward.type === 'flat'
      ? { type: 'flat', amount_cents: reward.amount }
      : { type: 'percentage', percent: reward.amount };
  const months = reward.maxDuration === undefined ? null : reward.maxDuration;
  const recurring =
    months === 0
      ? { mode: 'one_time' }
      : { mode: 'recurring', months: typeof months === 'number' ? months : null };
  return { ...rate, recurring };
}

/**
 * A group's discount as a discount here (the importer checks it): Dub's `amount` is a percentage or cents by
 * `type`; `maxDuration` months (null: forever, 0 or 1: once); `couponId` its Stripe coupon.
 */
export function groupDiscount(g: Obj): unknown {
  if (g.discount === null || g.discount === undefined) return null;
  const d = obj(g.discount);
  const months = d.maxDuration;
  const coupon = str(d.couponId);
  return {
    type: d.type === 'flat' ? 'flat' : 'percentage',
    ...(d.type === 'flat' ? { amount_cents: d.amount } : { percent: d.amount }),
    ...(months === null || months === undefined
      ? { duration: 'forever' }
      : months === 0 || months === 1
        ? { duration: 'once' }
        : { duration: 'repeating', months }),
    ...(coupon === null ? {} : { processor_ids: { stripe: coupon } }),
  };
}

async function page(
  ctx: FetchContext,
  path: string,
  cursor: string | null,
  extra: Record<string, string> = {},
) {
  const body = await ctx.get(path, {
    pageSize: String(PAGE_SIZE),
    ...(cursor === null ? {} : { startingAfter: cursor }),
    ...extra,
  });
  const data = list(body).map(obj);
  const last = data.length > 0 ? str(data[data.length - 1]!.id) : null;
  return { data, next: data.length >= PAGE_SIZE && last !== null ? last : null };
}

const bad = (kind: RowError['kind'], id: string | null, what: string): RowError => ({
  kind,
  external_id: id ?? '',
  code: 'invalid_row',
  message: `Dub ${kind} ${id ?? '(no id)'}: ${what}`,
});

async function fetchPage(ctx: FetchContext, step: string, cursor: string | null): Promise<Page> {
  const ids = ctx.options.campaign_ids;
  const errors: RowError[] = [];
  if (step === 'groups') {
    const { data, next } = await page(ctx, '/groups', cursor);
    const groups = data.flatMap((g) => {
      const id = str(g.id);
      if (id === null || str(g.name) === null) return (errors.push(bad('group', id, 'no id or name')), []);
      if (!selected(ids, id))
        return (
          errors.push({
            kind: 'group',
            external_id: id,
            code: 'campaign_not_selected',
            outcome: 'skipped',
            message: `Group ${id} is not among options.campaign_ids`,
          }),
          []
        );
      return [
        {
          external_id: id,
          name: str(g.name)!,
          commission: groupPolicy(g),
          hold_days: int(g.holdingPeriodDays),
          discount: groupDiscount(g),
          stripe_coupon_id: str(obj(g.discount).couponId),
        },
      ];
    });
    return { groups, errors, next };
  }
  if (step === 'partners') {
    const { data, next } = await page(ctx, '/partners', cursor);
    const out: Page = { partners: [], links: [], errors, next };
    for (const p of data) {
      const id = str(p.id);
      const email = str(p.email);
      if (id === null || email === null) {
        errors.push(bad('partner', id, 'no id or email'));
        continue;
      }
      const group = str(p.groupId);
      if (!selected(ids, group)) {
        errors.push({
          kind: 'partner',
          external_id: id,
          code: 'campaign_not_selected',
          outcome: 'skipped',
          message: `Its group ${group ?? '(none)'} is not among options.campaign_ids`,
        });
        continue;
      }
      const status = str(p.status) ?? 'unknown';
      out.partners!.push({
        external_id: id,
        email,
        name: str(p.name) ?? email,
        group: group === null ? null : { external_id: group },
        active: status === 'approved',
        status: status === 'approved' ? 'approved' : 'pending',
        inactive_reason: `its status is ${status}`,
      });
      for (const l of list(p.links).map(obj)) {
        const key = str(l.key);
        if (key !== null)
          out.links!.push({ external_id: str(l.id) ?? `${id}:${key}`, partner_external_id: id, code: key });
      }
    }
    return out;
  }
  if (step === 'discount-codes') {
    const { data, next } = await page(ctx, '/discount-codes', cursor);
    const codes = data.flatMap((c) => {
      const id = str(c.id);
      const code = str(c.code);
      const partner = str(c.partnerId);
      if (id === null || code === null || partner === null)
        return (errors.push(bad('code', id, 'no id, code or partnerId')), []);
      return [
        {
          external_id: id,
          partner_external_id: partner,
          code,
          stripe_id: null,
          archived: str(c.disabledAt) !== null,
        },
      ];
    });
    return { codes, errors, next };
  }
  if (step === 'customers') {
    const { data, next } = await page(ctx, '/customers', cursor, { includeExpandedFields: 'true' });
    const customers = data.flatMap((c) => {
      const id = str(c.id);
      if (id === null) return (errors.push(bad('customer', null, 'no id')), []);
      return [
        {
          external_id: id,
          partner_external_id: str(obj(c.partner).id),
          stripe_customer_id: str(c.stripeCustomerId),
          email: str(c.email),
          status: (num(c.sales) ?? 0) > 0 ? ('conversion' as const) : ('lead' as const),
          link_code: str(obj(c.link).key),
          created_at: date(c.createdAt),
        },
      ];
    });
    return { customers, errors, next };
  }
  const status = STATUSES.find(([s]) => step === `commissions:${s}`);
  if (!status) throw new Error(`dub: unknown step ${step}`);
  const { data, next } = await page(ctx, '/commissions', cursor, { status: status[0] });
  const commissions = data.flatMap((c) => {
    const id = str(c.id);
    const partner = str(obj(c.partner).id);
    const earnings = int(c.earnings);
    const amount = int(c.amount);
    const at = date(c.createdAt);
    if (
      id === null ||
      partner === null ||
      earnings === null ||
      earnings < 0 ||
      amount === null ||
      amount < 0 ||
      at === null
    )
      return (errors.push(bad('commission', id, 'no id, partner, earnings, amount or createdAt')), []);
    if (c.type !== undefined && c.type !== 'sale')
      return (
        errors.push({
          kind: 'commission',
          external_id: id,
          code: 'not_a_sale',
          outcome: 'skipped',
          message: `A ${String(c.type)} commission has no sale to record here`,
        }),
        []
      );
    const customer = obj(c.customer);
    const customerId = str(customer.id);
    return [
      {
        external_id: id,
        partner_external_id: partner,
        customer:
          customerId === null
            ? null
            : {
                external_id: customerId,
                partner_external_id: partner,
                stripe_customer_id: str(customer.stripeCustomerId),
                email: str(customer.email),
                status: 'conversion' as const,
                link_code: null,
                created_at: date(customer.createdAt),
              },
        amount_cents: earnings,
        sale_amount_cents: amount,
        currency: str(c.currency) ?? '',
        state: status[1],
        sale_at: at,
        due_at: null,
        paid_at: status[1] === 'paid' ? (date(c.updatedAt) ?? at) : null,
      },
    ];
  });
  return { commissions, errors, next };
}

export const dub: SourceAdapter = {
  name: 'dub',
  label: 'Dub',
  steps: ['groups', 'partners', 'discount-codes', 'customers', ...STATUSES.map(([s]) => `commissions:${s}`)],
  baseUrl: 'https://api.dub.co',
  credentialsError: (c) => secretField(c, 'api_key', "a Dub API key (dub_…) of the program's workspace"),
  auth: (c) => ({ headers: { authorization: `Bearer ${c.api_key}` } }),
  // Dub's lowest plan allows 60 requests a minute; a higher plan can set IMPORT_RATE_LIMIT.
  rateLimit: { requests: 60, windowMs: 60_000 },
  fetchPage,
  async campaigns(ctx) {
    const out: { id: string; name: string; commission: unknown }[] = [];
    let cursor: string | null = null;
    do {
      const p = await page(ctx, '/groups', cursor);
      for (const g of p.data)
        if (str(g.id) && str(g.name))
          out.push({ id: str(g.id)!, name: str(g.name)!, commission: groupPolicy(g) });
      cursor = p.next;
    } while (cursor !== null && out.length < 1000);
    return out;
  },
};
