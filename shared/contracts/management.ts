// Lists and shapes the management API accepts and answers, for its schemas and for the dashboard (a client
// of the API, which bundles this file: no imports): key scopes, member roles, processor connection statuses,
// the outcomes of processor events, a program's commission policy.

export const SCOPES = [
  '*',
  'program:list',
  'program:read',
  'program:create',
  'program:update',
  'program:delete',
  'program:go_live',
  'program:regenerate-token',
  'dashboard:view',
  // Part two (CONTRACT "Credentials, extended"): partner review and invites, payouts, outbound webhooks.
  'partners:read',
  'partners:write',
  'payouts:read',
  'payouts:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const CONNECTION_STATUSES = ['pending', 'connected', 'restricted', 'disconnected'] as const;

export const PROCESSOR_OUTCOMES = [
  'attributed',
  'recorded',
  'unattributed',
  'refund_applied',
  'linked',
  'waiting',
  'ignored',
  'failed',
] as const;

/** A commission rate; shared/domain/commission-policy.ts checks and applies it. */
export interface Rate {
  type: 'percentage' | 'flat';
  /** For percentage: 0..100, up to 4 decimals. */
  percent: number | null;
  /** For flat. */
  amount_cents: number | null;
}

/** A program's `commission` (CONTRACT "Programs"). */
export interface CommissionPolicy extends Rate {
  recurring: { mode: 'one_time' | 'recurring'; months: number | null };
  product_rules: (Rate & { product_id: string })[];
}
