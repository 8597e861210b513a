// The rules of webhook endpoints and their delivery log (CONTRACT "Webhooks to integrators"): what a field
// may hold, what an endpoint and a delivery look like in answers. The URL's SSRF rules are in
// shared/webhooks/address.ts (the worker applies them again at each delivery).
import { WEBHOOK_EVENT_TYPES } from '../../../../shared/contracts/webhook-events.ts';
import { iso, parseId } from '../../common.ts';
import type { AttemptRow, DeliveryRow, EndpointRow } from './dal.ts';

export { WEBHOOK_EVENT_TYPES };

export const ENDPOINT_NOT_FOUND = 'Webhook endpoint not found';
export const DELIVERY_NOT_FOUND = 'Webhook delivery not found';
export const ENDPOINT_DISABLED = 'Webhook endpoint is disabled; enable it first';
/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_HOURS = 24;
export const MAX_URL = 2048;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
const MAX_PROGRAM_IDS = 100;

export const ERR = {
  url: `url must be an absolute https:// URL of at most ${MAX_URL} characters`,
  description: 'description must be a string of at most 500 characters or null',
  status: 'status must be enabled or disabled',
  deliveryStatus: `status must be one of ${DELIVERY_STATUSES.join(', ')}`,
  page: 'page must be a positive integer',
  pageSize: 'pageSize must be an integer from 1 to 100',
} as const;

/** `events`: a non-empty list of known event types or '*'; the message, or null. */
export function eventsError(v: unknown): string | null {
  if (!Array.isArray(v) || v.length === 0 || v.length > 50)
    return 'events must be a non-empty array of event types (or ["*"])';
  for (const e of v) {
    if (e !== '*' && !(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(e))
      return `Unknown event type: ${typeof e === 'string' ? e : JSON.stringify(e)}. Allowed: *, ${WEBHOOK_EVENT_TYPES.join(', ')}`;
  }
  return null;
}

/** `program_ids`: null, or a non-empty list of program ids; the message, or null. */
export function programIdsError(v: unknown): string | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_PROGRAM_IDS)
    return `program_ids must be null or an array of 1 to ${MAX_PROGRAM_IDS} program ids`;
  for (const id of v) {
    if (
      !(typeof id === 'number' && Number.isSafeInteger(id) && id > 0) &&
      !(typeof id === 'string' && /^[1-9][0-9]{0,15}$/.test(id))
    )
      return `program_ids has an invalid program id: ${JSON.stringify(id)}`;
  }
  return null;
}

/**
 * Whether a caller limited to `scope` (a key's program_scope; null: every program) sees an endpoint that
 * receives the events of `programIds` (null: every program): only when every one of them is in the scope.
 */
export function endpointInScope(
  programIds: readonly (number | string)[] | null,
  scope: readonly number[] | null,
): boolean {
  if (scope === null) return true;
  return programIds !== null && programIds.every((id) => scope.includes(Number(id)));
}

/**
 * Whether `program_ids` as sent (before the schema: any JSON) reaches past `scope`: null or absent (every
 * program), or an id outside it. What the schema refuses anyway (not an array, a malformed id, an empty
 * list) is left to its 400.
 */
export function programIdsPastScope(v: unknown, scope: readonly number[]): boolean {
  if (v === undefined || v === null) return true;
  if (!Array.isArray(v)) return false;
  return v.some((id) => {
    const n = parseId(id);
    return n !== null && !scope.includes(n);
  });
}

/** Events, deduplicated; '*' alone when it is listed. */
export function normaliseEvents(v: string[] | undefined): string[] {
  if (v === undefined) return ['*'];
  return v.includes('*') ? ['*'] : [...new Set(v)];
}

/** Program ids as numbers, deduplicated and sorted; null stays null. */
export function normaliseProgramIds(v: (number | string)[] | null | undefined): number[] | null {
  if (v === undefined || v === null) return null;
  return [...new Set(v.map(Number))].sort((a, b) => a - b);
}

export function normaliseDescription(v: string | null | undefined): string | null {
  const t = v?.trim();
  return t ? t : null;
}

/** The 400 for ids that are not live programs of the workspace, or null. */
export function missingProgramsError(wanted: number[] | null, found: number[]): string | null {
  if (wanted === null) return null;
  const have = new Set(found);
  const missing = wanted.filter((id) => !have.has(id));
  return missing.length === 0
    ? null
    : `program_ids has a program not in this workspace: ${missing.join(', ')}`;
}

export function toEndpoint(r: EndpointRow) {
  return {
    id: Number(r.id),
    workspace_id: Number(r.workspace_id),
    url: r.url,
    description: r.description,
    events: r.events,
    program_ids: r.program_ids === null ? null : r.program_ids.map(Number),
    status: r.status,
    disabled_reason: r.disabled_reason,
    disabled_at: iso(r.disabled_at),
    failing_since: iso(r.failing_since),
    previous_secret_expires_at:
      r.previous_secret_expires_at !== null && new Date(r.previous_secret_expires_at).getTime() > Date.now()
        ? iso(r.previous_secret_expires_at)
        : null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export function toDelivery(r: DeliveryRow) {
  return {
    id: Number(r.id),
    endpoint_id: Number(r.endpoint_id),
    event_id: r.event_id,
    webhook_id: r.webhook_id,
    type: r.type,
    status: r.status,
    attempts: r.attempts,
    last_status_code: r.last_status_code,
    last_error: r.last_error,
    last_response: r.last_response,
    next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    created_at: iso(r.created_at),
    delivered_at: iso(r.delivered_at),
    payload: JSON.parse(r.payload) as unknown,
  };
}

export function toAttempt(r: AttemptRow) {
  return {
    attempted_at: iso(r.attempted_at),
    duration_ms: r.duration_ms,
    status_code: r.status_code,
    error: r.error,
    response: r.response,
  };
}
