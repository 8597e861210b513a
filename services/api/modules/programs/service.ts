// The rules of programs, pure: what a create or update body means once its schema has passed (trimmed
// name, upper-case currency, normalised policy and origins, defaults), the slug candidates, and the
// checks JSON Schema cannot state (ISO 4217 codes, URL origins, the commission policy), whose messages the
// schemas reuse.
import { randomBytes } from 'node:crypto';
import { HttpError } from '../../../../shared/http/server.ts';
import { DEFAULT_POLICY, parsePolicy, storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import { CURRENCY_CODES, MAX_AMOUNT_CENTS } from '../../../../shared/domain/money.ts';
import { ROLE_PERMISSIONS } from '../auth/access.ts';
import type { Role } from '../auth/access.ts';
import { iso } from '../../common.ts';
import type { ProgramFields, ProgramRow } from './dal.ts';
import { DEFAULT_RISK_RULES, parseRiskRules, riskRulesOf } from '../../../../shared/domain/risk-rules.ts';
import type { RiskRules } from '../../../../shared/domain/risk-rules.ts';
import { slugify } from '../../../../shared/domain/slug.ts';

/** Days from a sale until its commission is payable, unless a program says otherwise (CONTRACT part two). */
export const DEFAULT_HOLD_DAYS = 30;

export const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const MAX_ORIGINS = 100;

export const ERR = {
  name: 'name is required and must be 1 to 200 characters',
  slug: 'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
  cookieWindow: 'cookie_window_days must be an integer from 1 to 3650',
  currency: 'currency must be an ISO 4217 currency code',
  origins: `allowed_origins must be an array of at most ${MAX_ORIGINS} origins such as https://shop.example.com`,
  origin: (i: number) =>
    `allowed_origins[${i}] must be an origin such as https://shop.example.com (http or https, host and optional port; no path, query or wildcard)`,
  status: 'status is changed with POST /api/advertiser/affiliate-programs/:id/go-live',
  slugTaken: 'slug is already taken',
  currencyLocked: 'currency cannot be changed once the program has partners or sales',
  noFreeSlug: 'Could not generate a free slug; give one explicitly',
  holdDays: 'hold_days must be an integer from 0 to 365',
  minPayout: `min_payout_cents must be an integer from 0 to ${MAX_AMOUNT_CENTS}`,
  publicPage: 'public_page must be true or false',
  autoApprove: 'auto_approve must be true or false',
  description: 'description must be a string of at most 2000 characters',
  partnerLinks: 'partner_links must be true or false',
  // Codes (docs/codes.md).
  websiteUrl: 'website_url must be an http or https URL of at most 2000 characters',
  codeAttribution: "code_attribution must be 'fallback' or 'override'",
} as const;

/** null, or why `v` is not an http(s) URL (website_url); surrounding spaces do not matter. */
export function websiteUrlError(v: unknown): string | null {
  if (typeof v !== 'string' || v.trim().length > 2000) return ERR.websiteUrl;
  try {
    const u = new URL(v.trim());
    return u.protocol === 'https:' || u.protocol === 'http:' ? null : ERR.websiteUrl;
  } catch {
    return ERR.websiteUrl;
  }
}

/** Fields an update may not set to null, in the order they are checked. */
export const NOT_NULLABLE = [
  'slug',
  'cookie_window_days',
  'currency',
  'commission',
  'allowed_origins',
  'name',
  'hold_days',
  'min_payout_cents',
  'public_page',
  'auto_approve',
  'partner_links',
  'code_attribution',
  'risk_rules',
] as const;

/** A program as the API shows it: the row with numeric ids and an ISO creation time. */
export type Program = Omit<
  ProgramRow,
  'id' | 'workspace_id' | 'created_at' | 'min_payout_cents' | 'risk_rules'
> & {
  risk_rules: RiskRules;
  id: number;
  workspace_id: number;
  created_at: string;
  min_payout_cents: number;
};

export function toProgram(r: ProgramRow): Program {
  // Stored policies are normalised on write; rows written elsewhere (seed, the column default) are shown
  // normalised too (storedPolicy).
  return {
    id: Number(r.id),
    workspace_id: Number(r.workspace_id),
    name: r.name,
    slug: r.slug,
    status: r.status,
    cookie_window_days: r.cookie_window_days,
    currency: r.currency,
    commission: storedPolicy(r.commission),
    allowed_origins: r.allowed_origins,
    api_token_masked: r.api_token_masked,
    created_at: iso(r.created_at)!,
    hold_days: r.hold_days,
    min_payout_cents: Number(r.min_payout_cents),
    public_page: r.public_page,
    auto_approve: r.auto_approve,
    description: r.description,
    partner_links: r.partner_links,
    website_url: r.website_url,
    code_attribution: r.code_attribution,
    risk_rules: riskRulesOf(r.risk_rules),
  };
}

export { slugify };

/** The slugs to try in order: the given one only, or the name's and five with a random suffix. */
export function slugCandidates(slug: string | undefined, name: string): string[] {
  if (slug !== undefined) return [slug];
  const base = slugify(name);
  return [base, ...Array.from({ length: 5 }, () => `${base}-${randomBytes(3).toString('hex')}`)];
}

/** null, or why `v` is not an ISO 4217 code (surrounding spaces and case do not matter). */
export function currencyError(v: unknown): string | null {
  const c = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return /^[A-Z]{3}$/.test(c) && CURRENCY_CODES.has(c) ? null : ERR.currency;
}

/**
 * The origins a browser may call click and lead from: scheme http or https, a host, an optional port,
 * nothing else (no path, query, fragment, credentials or wildcard). Stored as URL.origin (lowercase host,
 * default port dropped), which is what a browser sends in its Origin header.
 */
export function parseOrigins(v: unknown): string[] | string {
  if (!Array.isArray(v) || v.length > MAX_ORIGINS) return ERR.origins;
  const out: string[] = [];
  for (const [i, s] of v.entries()) {
    if (typeof s !== 'string' || s.length > 300) return ERR.origin(i);
    let u: URL;
    try {
      u = new URL(s.trim());
    } catch {
      return ERR.origin(i);
    }
    if (
      (u.protocol !== 'https:' && u.protocol !== 'http:') ||
      u.username !== '' ||
      u.password !== '' ||
      u.hostname.includes('*') ||
      u.pathname !== '/' ||
      u.search !== '' ||
      u.hash !== ''
    ) {
      return ERR.origin(i);
    }
    if (!out.includes(u.origin)) out.push(u.origin);
  }
  return out;
}

export const originsError = (v: unknown) => {
  const r = parseOrigins(v);
  return typeof r === 'string' ? r : null;
};

/** A program body as the schemas let it through (null: omitted, on create). */
export interface ProgramBody {
  name?: string | null;
  slug?: string | null;
  cookie_window_days?: number | null;
  currency?: string | null;
  commission?: unknown;
  allowed_origins?: unknown;
  hold_days?: number | null;
  min_payout_cents?: number | null;
  public_page?: boolean | null;
  auto_approve?: boolean | null;
  description?: string | null;
  partner_links?: boolean | null;
  website_url?: string | null;
  code_attribution?: 'fallback' | 'override' | null;
  risk_rules?: unknown;
}

/** The normalised fields present in a validated body; throws the field's 400 if it was not validated. */
export function programFields(b: ProgramBody): ProgramFields {
  const f: ProgramFields = {};
  const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;
  if (given(b.name)) f.name = b.name.trim();
  if (given(b.slug)) f.slug = b.slug;
  if (given(b.cookie_window_days)) f.cookie_window_days = b.cookie_window_days;
  if (given(b.currency)) f.currency = b.currency.trim().toUpperCase();
  if (given(b.commission)) {
    const policy = parsePolicy(b.commission);
    if (typeof policy === 'string') throw new HttpError(400, policy);
    f.commission = policy;
  }
  if (given(b.allowed_origins)) {
    const origins = parseOrigins(b.allowed_origins);
    if (typeof origins === 'string') throw new HttpError(400, origins);
    f.allowed_origins = origins;
  }
  if (given(b.hold_days)) f.hold_days = b.hold_days;
  if (given(b.min_payout_cents)) f.min_payout_cents = b.min_payout_cents;
  if (given(b.public_page)) f.public_page = b.public_page;
  if (given(b.auto_approve)) f.auto_approve = b.auto_approve;
  if (given(b.partner_links)) f.partner_links = b.partner_links;
  if (given(b.risk_rules)) {
    const rules = parseRiskRules(b.risk_rules);
    if (typeof rules === 'string') throw new HttpError(400, rules);
    f.risk_rules = rules;
  }
  // An empty description is none; null (on update) clears it.
  if (b.description !== undefined) f.description = b.description?.trim() || null;
  // The same for website_url (docs/codes.md).
  if (b.website_url !== undefined) f.website_url = b.website_url?.trim() || null;
  if (given(b.code_attribution)) f.code_attribution = b.code_attribution;
  return f;
}

/** What a new program is created with: the fields given, defaults for the rest. */
export function newProgram(b: ProgramBody & { name: string }) {
  const f = programFields(b);
  return {
    name: f.name!,
    cookie_window_days: f.cookie_window_days ?? 60,
    currency: f.currency ?? 'USD',
    commission: f.commission ?? DEFAULT_POLICY,
    allowed_origins: f.allowed_origins ?? [],
    hold_days: f.hold_days ?? DEFAULT_HOLD_DAYS,
    min_payout_cents: f.min_payout_cents ?? 0,
    public_page: f.public_page ?? false,
    auto_approve: f.auto_approve ?? false,
    description: f.description ?? null,
    partner_links: f.partner_links ?? true,
    website_url: f.website_url ?? null,
    code_attribution: f.code_attribution ?? 'fallback',
    risk_rules: { ...DEFAULT_RISK_RULES, ...f.risk_rules },
    slugs: slugCandidates(f.slug, f.name!),
  };
}

/** An update may not null a field: the first null one (in NOT_NULLABLE order) is a 400. */
export function rejectNulls(b: unknown): void {
  if (typeof b !== 'object' || b === null || Array.isArray(b)) return;
  const body = b as Record<string, unknown>;
  for (const k of NOT_NULLABLE) if (body[k] === null) throw new HttpError(400, `${k} cannot be null`);
}

/** `status` in an update may only repeat the current one: status changes go through go-live. */
export function checkStatusUnchanged(wanted: string | undefined, current: Program['status']): void {
  if (wanted !== undefined && wanted !== current) throw new HttpError(400, ERR.status);
}

/** Roles that may list programs (all of them today; read from the role table, not assumed). */
export const LISTING_ROLES: Role[] = (Object.keys(ROLE_PERMISSIONS) as Role[]).filter((r) =>
  ROLE_PERMISSIONS[r].has('program:list'),
);
