// The operations check:openapi (scripts/check-openapi.ts) runs apart from the main run or judges by a rule
// of their own, and the warnings that fail a run: the lists, each with why.

/** The keys of an OpenAPI path item that are operations. */
export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/**
 * The operations that end a credential the run signs in with, or the demo program's tracking token: each
 * runs alone after the others, with a session of its own (those ending a program may end the demo's).
 */
export const ENDING = [
  'POST /api/auth/logout',
  'DELETE /api/auth/session',
  'POST /api/partner/auth/logout',
  'DELETE /api/partner/auth/session',
  'POST /api/advertiser/affiliate-programs/{id}/regenerate-api-token',
  'DELETE /api/advertiser/affiliate-programs/{id}',
];

/**
 * Rules a JSON Schema cannot state, by which a request valid by its operation's schema is still 400 (as
 * CONTRACT.md and docs/api.md say): they depend on stored data, on another part of the same request, or
 * on a URL parser. For these operations alone, schemathesis's positive_data_acceptance check also takes a
 * 400; every other check, and that check on every other operation, stays as it is. Every rule a schema can
 * state is in the schema instead (formats, ranges, enums, patterns, which field a value needs).
 */
export const UNSTATED: Record<string, string> = {
  'POST /api/partner/auth/accept-invite':
    'an unknown, used or expired invite token: `Invalid or expired invite`',
  'POST /api/partner/auth/session/accept-invite': 'the same invite rule',
  'POST /api/partner/auth/magic-link/verify': 'an unknown, used or expired sign-in link token',
  'POST /api/partner/auth/session/magic-link': 'the same sign-in link rule',
  'PUT /api/partner/me': '`current_password` must be the account’s password',
  'PUT /api/advertiser/affiliate-programs/{id}':
    '`status` must be the program’s current status (go-live changes it)',
  'POST /api/advertiser/affiliate-programs': 'workspace_id in the body and in the query string must agree',
  'POST /api/advertiser/members': 'workspace_id in the body and in the query string must agree',
  'POST /api/advertiser/api-keys':
    'workspace_id in the body and in the query string must agree; program_scope names programs of the workspace',
  'PUT /api/advertiser/api-keys/{id}': 'program_scope names programs of the workspace',
  'POST /api/advertiser/webhooks':
    'workspace_id in the body and in the query string must agree; the URL must resolve to a public address',
  'PUT /api/advertiser/processor-connection': 'workspace_id in the body and in the query string must agree',
  'PUT /api/advertiser/processor-connections/{processor}':
    'workspace_id in the body and in the query string must agree; the secret’s form depends on the processor (whsec_ for Stripe, 6 to 40 characters for Lemon Squeezy)',
  'GET /api/tracking/events/{programId}': 'dateFrom after dateTo; a day past its month’s end (2025-02-30)',
  'GET /api/tracking/performance/{programId}':
    'the same date rules; a custom range of at most the allowed days',
  'GET /api/tracking/breakdown/{programId}': 'the same date rules',
  'GET /api/partner/programs/{programId}/events': 'the same date rules',
  'GET /api/partner/programs/{programId}/performance': 'the same date rules',
  'POST /api/v1/track/click':
    'affiliate_url is read by the WHATWG URL parser (http(s), a host, a non-empty `aff`); the link must exist',
  'POST /api/tracking/click': 'the same click rules',
  'POST /api/v1/track/lead': 'a click_id or customer_key must name a customer of the program (CONTRACT)',
  'POST /api/tracking/lead': 'the same lead rules',
  'POST /api/v1/track/sale': "`currency` must be the program's; the customer must exist",
  'POST /api/tracking/sale': 'the same sale rules',
  // Rewards (docs/rewards.md): what names another object must name one of the program.
  'POST /api/advertiser/affiliate-programs/{id}/partners': '`group_id` must name a group of the program',
  'POST /api/advertiser/affiliate-programs/{id}/groups': '`slug` must be free in the program',
  'PUT /api/advertiser/affiliate-programs/{id}/groups/{groupId}': '`slug` must be free in the program',
  'PUT /api/advertiser/affiliate-programs/{id}/partners/{partnerId}/group':
    '`group_id` must name a group of the program',
  'PUT /api/advertiser/affiliate-programs/{id}/tier-rules':
    'every group named must be a group of the program; no rule to its own group; no cycle',
  'POST /api/advertiser/affiliate-programs/{id}/bonuses':
    '`group_ids` must name groups of the program; `ends_at` in the future and after `starts_at`',
  // Imports (docs/importing.md): what depends on the file's text or on the address a URL resolves to.
  'POST /api/advertiser/affiliate-programs/{id}/imports':
    'a CSV file needs a header with an `email` column and a row; `options.api_base_url` must resolve to an address the rules allow',
  'POST /api/advertiser/affiliate-programs/{id}/imports/campaigns':
    '`options.api_base_url` must resolve to an address the rules allow; the source must take the credentials',
  'GET /api/public/programs/{slug}': '`?group=` must be the slug of a group of the program',
  'POST /api/public/programs/{slug}/apply': '`?group=` must be the slug of a group of the program',
};

/**
 * Operations that read a third party while answering: here, with no network, the source cannot be reached and
 * they answer their documented 502. These run on their own with schemathesis's not_a_server_error check off
 * (a per-operation setting does not reach its stateful phase); every other check stays, and
 * imports-api.test.ts drives them against doubles of the sources.
 */
export const UPSTREAM: Record<string, string> = {
  'POST /api/advertiser/affiliate-programs/{id}/imports/campaigns':
    "reads the campaigns (Rewardful) or groups (Dub) from the source's API with the credentials given",
};

/**
 * The warnings that fail the run, as a failure does: the credentials did not work (an operation answered
 * only 401/403, so its schemas were never checked past authentication), or the document itself cannot be
 * read as written. The others (no test data behind an id, a text/csv answer not validated) are printed.
 */
export const FAILING_WARNINGS = [
  'missing_auth',
  'unused_openapi_auth',
  'base_url_mismatch',
  'validation_mismatch',
  'unsupported_regex',
  'unresolvable_reference',
  'rate_limited',
];
