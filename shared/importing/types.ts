// What an importer reads from a source, in the source's own terms mapped onto this service's (CONTRACT part
// five; docs/importing.md): a source adapter (sources/<name>.ts) turns one page of its API or file into
// these rows, and the importer (apply-*.ts) writes them the same way whatever the source.
import type { ImportedState } from '../commissions/states.ts';
import type { AddressPolicy } from '../webhooks/address.ts';

export const SOURCE_NAMES = ['rewardful', 'dub', 'csv'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

/** What an imported row becomes here; the import's `counts` are kept per kind. */
export const KINDS = ['group', 'partner', 'link', 'code', 'customer', 'commission'] as const;
export type Kind = (typeof KINDS)[number];
export const COUNT_KEYS = {
  group: 'groups',
  partner: 'partners',
  link: 'links',
  code: 'codes',
  customer: 'customers',
  commission: 'commissions',
} as const satisfies Record<Kind, string>;
export type CountKey = (typeof COUNT_KEYS)[Kind];
export const OUTCOMES = ['created', 'updated', 'skipped', 'failed'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type Counts = Record<CountKey, Record<Outcome, number>>;

/** A campaign (Rewardful) or group (Dub): a group here. */
export interface SourceGroup {
  external_id: string;
  name: string;
  /** Its terms as a commission policy (checked by the importer: invalid terms are an error row). */
  commission: unknown;
  /** Days until its commissions are due; null: the program's hold. */
  hold_days: number | null;
  /** The group's discount for referred customers as a discount (the importer checks it); null: none. */
  discount: unknown;
  /** The Stripe coupon of that discount, when the source names one. */
  stripe_coupon_id: string | null;
}

/** An affiliate (Rewardful), a partner (Dub) or a CSV row: a partner here, found by email. */
export interface SourcePartner {
  external_id: string;
  email: string;
  name: string;
  /** The group it is in at the source (its external id), or by slug (CSV); null: the default group. */
  group: { external_id: string } | { slug: string } | null;
  /** false: not active at the source (`inactive_partner` unless options.include_inactive). */
  active: boolean;
  /** What it becomes in the program: approved, or pending when the source has it suspended or the like. */
  status: 'approved' | 'pending';
  /** Why it counts as inactive, for its error row. */
  inactive_reason?: string;
}

/** A link code a partner shared (Rewardful `links[].token`, Dub link `key`, CSV `link`). */
export interface SourceLink {
  external_id: string;
  partner_external_id: string;
  code: string;
}

/** A coupon / discount code of a partner (Rewardful affiliate coupon, Dub discount code, CSV `coupon_code`). */
export interface SourceCode {
  external_id: string;
  partner_external_id: string;
  code: string;
  /** The processor's id of the coupon or promotion code (Rewardful `external_id`, CSV `stripe_promotion_code`). */
  stripe_id: string | null;
  /** Deactivated at the source: skipped (`archived_coupon`). */
  archived: boolean;
}

/** A referral (Rewardful) or customer (Dub): a customer here, keyed by its processor customer id. */
export interface SourceCustomer {
  external_id: string;
  partner_external_id: string | null;
  /** The Stripe customer id (`cus_…`); anything else is `customer_not_found`. */
  stripe_customer_id: string | null;
  email: string | null;
  status: 'lead' | 'conversion';
  /** The link code it came through, when the source says. */
  link_code: string | null;
  created_at: Date | null;
}

/** A commission and its sale, in the state it has at the source. */
export interface SourceCommission {
  external_id: string;
  partner_external_id: string;
  /** Its customer, as the source embeds it (null: none, `customer_not_found`). */
  customer: SourceCustomer | null;
  amount_cents: number;
  sale_amount_cents: number;
  /** ISO 4217, any case. */
  currency: string;
  state: ImportedState;
  /** When the sale was made (the commission's sale_date here). */
  sale_at: Date;
  /** When it is (was) due: payable_at here; null: the sale's time and the group's or program's hold. */
  due_at: Date | null;
  paid_at: Date | null;
}

/** A row the adapter could not read (a CSV line without an email, an object missing a field). */
export interface RowError {
  kind: Kind;
  external_id: string;
  code: string;
  message: string;
  /** How an adapter's error row counts: skipped (left out on purpose) or failed (the default). */
  outcome?: 'skipped' | 'failed';
}

/** One page of a source, mapped. The importer applies its rows in this order. */
export interface Page {
  groups?: SourceGroup[];
  partners?: SourcePartner[];
  links?: SourceLink[];
  codes?: SourceCode[];
  customers?: SourceCustomer[];
  commissions?: SourceCommission[];
  errors?: RowError[];
  /** The cursor of the step's next page; null: the step is done. */
  next: string | null;
}

/** What an import was asked for (the API's `options`, normalised). */
export interface ImportOptions {
  api_base_url: string | null;
  campaign_ids: string[] | null;
  include_inactive: boolean;
}

/** A GET to the source, answered with its JSON (shared/importing/http.ts does rate limits and 429s). */
export type SourceGet = (path: string, query: Record<string, string | string[]>) => Promise<unknown>;

export interface FetchContext {
  options: ImportOptions;
  /** GET on the source's API with its credentials (not for CSV). */
  get: SourceGet;
  /** The uploaded file (CSV only). */
  csv: string | null;
}

/** A request as a source adapter builds it: the importer sends it (http.ts). */
export interface SourceAuth {
  headers: Record<string, string>;
}

/** One source, one file (sources/<name>.ts): a fourth source is one more file and one line in sources/index.ts. */
export interface SourceAdapter {
  name: SourceName;
  /** How it names itself in messages ('Rewardful'). */
  label: string;
  /** Its steps in order; each is paged through before the next. */
  steps: readonly string[];
  /** Its API's base URL (options.api_base_url replaces it); null: a file. */
  baseUrl: string | null;
  /** What its credentials must hold: the error naming the field, or null. */
  credentialsError(c: unknown): string | null;
  /** The request headers its credentials make (Basic, Bearer). */
  auth(c: Record<string, string>): SourceAuth;
  /** Its documented rate limit (null: none), kept under by the importer. */
  rateLimit: { requests: number; windowMs: number } | null;
  /** One page of `step` from `cursor` (null: the first), mapped. */
  fetchPage(ctx: FetchContext, step: string, cursor: string | null): Promise<Page>;
  /** The campaigns/groups the picker offers (id, name): one request or a few. */
  campaigns?(ctx: FetchContext): Promise<{ id: string; name: string; commission: unknown }[]>;
}

/** What the importer's HTTP calls need: the SSRF rules (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_RESOLVE). */
export interface SourceHttpPolicy {
  policy: AddressPolicy;
  timeoutMs: number;
}
