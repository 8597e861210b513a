// Lists and shapes the management API accepts and answers, for its schemas and for the dashboard (a client
// of the API, which bundles this file: no imports): key scopes, member roles, processor connection statuses,
// the outcomes of processor events. (A commission policy's shape is shared/domain/policy-schema.ts's schema;
// the dashboard reads it from the API's own types.)

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
