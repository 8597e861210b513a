// Rewardful (developers.rewardful.com, REST API v1): HTTP Basic with the API Secret as the user name;
// lists paged with `page` and `limit` (default 25, at most 100) in a `{ pagination, data }` envelope
// (`pagination.next_page` null on the last page); 45 requests per 30 s. Read in five steps: campaigns →
// groups, affiliates → partners and their links, affiliate coupons → partner codes, referrals (leads and
// conversions) → customers, commissions (with their sale) → commissions. docs/importing.md "Rewardful".
import type { ImportedState } from '../../commissions/states.ts';
import type { FetchContext, Page, RowError, SourceAdapter, SourceCustomer } from '../types.ts';
import { date, int, list, num, obj, secretField, selected, str } from './common.ts';
import type { Obj } from './common.ts';

const LIMIT = '100';

const STATES: Record<string, ImportedState> = {
  pending: 'pending',
  due: 'approved',
  paid: 'paid',
  voided: 'rejected',
};

/** Rewardful fills a missing last name with "Unknown": it is not part of the name. */
export function affiliateName(a: Obj): string {
  const first = str(a.first_name)?.trim() ?? '';
  const lastRaw = str(a.last_name)?.trim() ?? '';
  const last = lastRaw === 'Unknown' ? '' : lastRaw;
  return [first, last].filter(Boolean).join(' ');
}

/** A campaign's terms as a commission policy (the importer checks it). */
export function campaignPolicy(c: Obj): unknown {
  const rate =
    c.reward_type === 'amount'
      ? { type: 'flat', amount_cents: c.commission_amount_cents }
      : { type: 'percentage', percent: c.commission_percent };
  const maxCommissions = int(c.max_commissions);
  const months = int(c.max_commission_period_months);
  const recurring =
    maxCommissions === 1 || months === 0
      ? { mode: 'one_time' }
      : { mode: 'recurring', months: months !== null && months > 0 ? months : null };
  return { ...rate, recurring };
}

/** A referral (or a commission's sale's referral) as a customer; null when it has no id. */
export function referralCustomer(r: Obj): SourceCustomer | null {
  const id = str(r.id);
  if (id === null) return null;
  const customer = obj(r.customer);
  return {
    external_id: id,
    partner_external_id: str(obj(r.affiliate).id),
    stripe_customer_id: str(r.stripe_customer_id) ?? str(customer.id),
    email: str(customer.email),
    status: r.conversion_state === 'conversion' ? 'conversion' : 'lead',
    link_code: str(obj(r.link).token),
    created_at: date(r.became_lead_at) ?? date(r.created_at),
  };
}

async function page(
  ctx: FetchContext,
  path: string,
  cursor: string | null,
  extra: Record<string, string[]> = {},
) {
  const body = obj(await ctx.get(path, { page: cursor ?? '1', limit: LIMIT, ...extra }));
  const next = num(obj(body.pagination).next_page);
  return { data: list(body.data).map(obj), next: next === null ? null : String(next) };
}

const bad = (kind: RowError['kind'], id: string | null, what: string): RowError => ({
  kind,
  external_id: id ?? '',
  code: 'invalid_row',
  message: `Rewardful ${kind} ${id ?? '(no id)'}: ${what}`,
});

const notSelected = (kind: RowError['kind'], id: string, campaign: string | null): RowError => ({
  kind,
  external_id: id,
  code: 'campaign_not_selected',
  outcome: 'skipped',
  message: `Its campaign ${campaign ?? '(none)'} is not among options.campaign_ids`,
});

async function fetchPage(ctx: FetchContext, step: string, cursor: string | null): Promise<Page> {
  const ids = ctx.options.campaign_ids;
  const errors: RowError[] = [];
  switch (step) {
    case 'campaigns': {
      const { data, next } = await page(ctx, '/v1/campaigns', cursor);
      const groups = data.flatMap((c) => {
        const id = str(c.id);
        if (id === null || str(c.name) === null) return (errors.push(bad('group', id, 'no id or name')), []);
        if (!selected(ids, id)) return (errors.push(notSelected('group', id, id)), []);
        return [
          {
            external_id: id,
            name: str(c.name)!,
            commission: campaignPolicy(c),
            hold_days: int(c.days_until_commissions_are_due),
            // Rewardful names the campaign's Stripe coupon, not its terms.
            discount: null,
            stripe_coupon_id: str(c.stripe_coupon_id),
          },
        ];
      });
      return { groups, errors, next };
    }
    case 'affiliates': {
      const { data, next } = await page(ctx, '/v1/affiliates', cursor, { 'expand[]': ['campaign', 'links'] });
      const out: Page = { partners: [], links: [], errors, next };
      for (const a of data) {
        const id = str(a.id);
        const email = str(a.email);
        if (id === null || email === null) {
          errors.push(bad('partner', id, 'no id or email'));
          continue;
        }
        const campaign = str(obj(a.campaign).id);
        if (!selected(ids, campaign)) {
          errors.push(notSelected('partner', id, campaign));
          continue;
        }
        const state = str(a.state) ?? 'unknown';
        const leads = num(a.leads) ?? 0;
        out.partners!.push({
          external_id: id,
          email,
          name: affiliateName(a) || email,
          group: campaign === null ? null : { external_id: campaign },
          active: state === 'active' && leads > 0,
          status: state === 'active' ? 'approved' : 'pending',
          inactive_reason: state !== 'active' ? `its state is ${state}` : 'it has no leads',
        });
        for (const l of list(a.links).map(obj)) {
          const token = str(l.token);
          if (token !== null)
            out.links!.push({
              external_id: str(l.id) ?? `${id}:${token}`,
              partner_external_id: id,
              code: token,
            });
        }
      }
      return out;
    }
    case 'coupons': {
      const { data, next } = await page(ctx, '/v1/affiliate_coupons', cursor);
      const codes = data.flatMap((c) => {
        const id = str(c.id);
        const token = str(c.token);
        const affiliate = str(c.affiliate_id);
        if (id === null || token === null || affiliate === null)
          return (errors.push(bad('code', id, 'no id, token or affiliate_id')), []);
        return [
          {
            external_id: id,
            partner_external_id: affiliate,
            code: token,
            stripe_id: str(c.external_id),
            archived: c.archived === true || str(c.archived_at) !== null,
          },
        ];
      });
      return { codes, errors, next };
    }
    case 'referrals': {
      const { data, next } = await page(ctx, '/v1/referrals', cursor, {
        'conversion_state[]': ['lead', 'conversion'],
      });
      // Visitors are not customers (they never signed up): not imported, not errors.
      const customers = data
        .filter((r) => r.conversion_state === 'lead' || r.conversion_state === 'conversion')
        .flatMap((r) => {
          const c = referralCustomer(r);
          return c === null ? (errors.push(bad('customer', null, 'no id')), []) : [c];
        });
      return { customers, errors, next };
    }
    case 'commissions': {
      const { data, next } = await page(ctx, '/v1/commissions', cursor, { 'expand[]': ['sale', 'campaign'] });
      const commissions = data.flatMap((c) => {
        const id = str(c.id);
        const sale = obj(c.sale);
        const affiliate = str(obj(sale.affiliate).id) ?? str(obj(c.affiliate).id);
        const state = STATES[str(c.state) ?? ''];
        const amount = int(c.amount);
        const saleAmount = int(sale.sale_amount_cents);
        const saleAt = date(sale.charged_at) ?? date(sale.created_at) ?? date(c.created_at);
        if (id === null || affiliate === null || state === undefined || amount === null || amount < 0)
          return (errors.push(bad('commission', id, 'no id, affiliate, known state or amount')), []);
        if (saleAmount === null || saleAmount < 0 || saleAt === null)
          return (errors.push(bad('commission', id, 'its sale has no sale_amount_cents or time')), []);
        const campaign = str(obj(c.campaign).id);
        if (ids !== null && !selected(ids, campaign))
          return (errors.push(notSelected('commission', id, campaign)), []);
        return [
          {
            external_id: id,
            partner_external_id: affiliate,
            customer: referralCustomer(obj(sale.referral)),
            amount_cents: amount,
            sale_amount_cents: saleAmount,
            currency: str(c.currency) ?? str(sale.currency) ?? '',
            state,
            sale_at: saleAt,
            due_at: date(c.due_at),
            paid_at: date(c.paid_at),
          },
        ];
      });
      return { commissions, errors, next };
    }
    default:
      throw new Error(`rewardful: unknown step ${step}`);
  }
}

export const rewardful: SourceAdapter = {
  name: 'rewardful',
  label: 'Rewardful',
  steps: ['campaigns', 'affiliates', 'coupons', 'referrals', 'commissions'],
  baseUrl: 'https://api.getrewardful.com',
  credentialsError: (c) => secretField(c, 'api_secret', "the API Secret of Rewardful's Company Settings"),
  auth: (c) => ({
    headers: { authorization: `Basic ${Buffer.from(`${c.api_secret}:`).toString('base64')}` },
  }),
  rateLimit: { requests: 45, windowMs: 30_000 },
  fetchPage,
  async campaigns(ctx) {
    const out: { id: string; name: string; commission: unknown }[] = [];
    let cursor: string | null = null;
    do {
      const p = await page(ctx, '/v1/campaigns', cursor);
      for (const c of p.data)
        if (str(c.id) && str(c.name))
          out.push({ id: str(c.id)!, name: str(c.name)!, commission: campaignPolicy(c) });
      cursor = p.next;
    } while (cursor !== null && out.length < 1000);
    return out;
  },
};
