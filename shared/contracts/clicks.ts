// Kafka message shapes. The ingress produces them; workers validate before use, and a message that
// fails validation is dead-lettered with the reason rather than retried.
import { isId } from '../domain/ids.ts';
import { RECORD_TYPE_HEADER } from './topics.ts';

export interface ClickMessage {
  v: 1;
  type: 'click';
  /** Snowflake minted at the ingress (decimal string); with ts, the idempotency key of the click event. */
  event_id: string;
  /**
   * The caller's own id of the click (a UUID, lower case), when it sent one: the click worker stores one
   * click per (program, client_event_id), so a retry is not counted twice. Absent or null: none sent.
   */
  client_event_id?: string | null;
  /** Milliseconds since the epoch, the moment the ingress accepted the click. */
  ts: number;
  program_id: number;
  link_id: number | null;
  partner_id: number | null;
  partner_program_id: number | null;
  /** The customer's click id; null for test-mode clicks (no customer is created). */
  click_id: string | null;
  is_test: boolean;
  /**
   * A bot's click or a prefetch (shared/tracking/quality.ts, decided at the ingress): stored with this
   * quality, counted nowhere. Absent: a person's click (every message from before quality existed too).
   */
  quality?: 'bot' | 'prefetch';
  ip: string | null;
  user_agent: string | null;
  page_url: string | null;
  page_title: string | null;
  referrer_url: string | null;
  session_id: string | null;
  screen_resolution: string | null;
  viewport_size: string | null;
  language: string | null;
  timezone: string | null;
}

export const CLICK_TEXT_FIELDS = [
  'user_agent',
  'page_url',
  'page_title',
  'referrer_url',
  'session_id',
  'screen_resolution',
  'viewport_size',
  'language',
  'timezone',
] as const;

/** Longest stored value per free-text field; longer input is truncated at the ingress. */
export const TEXT_LIMITS: Record<(typeof CLICK_TEXT_FIELDS)[number], number> = {
  user_agent: 512,
  page_url: 2048,
  page_title: 512,
  referrer_url: 2048,
  session_id: 128,
  screen_resolution: 32,
  viewport_size: 32,
  language: 35,
  timezone: 64,
};

/** A UUID of any version, as the click body's `event_id` takes it. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isNullableId = (v: unknown): v is number | null => v === null || isId(v);
const isNullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** Returns the message, or the reason it cannot be processed. */
export function parseClickMessage(bytes: Buffer | null): ClickMessage | string {
  if (!bytes || bytes.length === 0) return 'empty message';
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return 'not JSON';
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'not a JSON object';
  if (m.v !== 1 || m.type !== 'click') return `unsupported message type ${String(m.type)} v${String(m.v)}`;
  if (typeof m.event_id !== 'string' || !/^[1-9][0-9]{0,18}$/.test(m.event_id)) return 'bad event_id';
  if (
    m.client_event_id !== undefined &&
    m.client_event_id !== null &&
    (typeof m.client_event_id !== 'string' || !UUID_RE.test(m.client_event_id))
  )
    return 'bad client_event_id';
  if (typeof m.ts !== 'number' || !Number.isSafeInteger(m.ts) || m.ts <= 0) return 'bad ts';
  if (!isId(m.program_id)) return 'bad program_id';
  for (const k of ['link_id', 'partner_id', 'partner_program_id'] as const) {
    if (!isNullableId(m[k])) return `bad ${k}`;
  }
  if (typeof m.is_test !== 'boolean') return 'bad is_test';
  if (!isNullableString(m.click_id)) return 'bad click_id';
  if (!m.is_test && (m.click_id === null || m.link_id === null || m.partner_program_id === null)) {
    return 'a non-test click needs click_id, link_id and partner_program_id';
  }
  if (m.quality !== undefined && m.quality !== 'bot' && m.quality !== 'prefetch') return 'bad quality';
  if (!isNullableString(m.ip)) return 'bad ip';
  for (const k of CLICK_TEXT_FIELDS) if (!isNullableString(m[k])) return `bad ${k}`;
  return m as unknown as ClickMessage;
}

const LEAD = Buffer.from('lead');

/**
 * Whether a record of the clicks topic is a lead command (the rest are clicks): its `type` header, set by
 * the ingress. A record written before the header existed (an upgrade's backlog) has none: then the JSON
 * value's own `type` field decides, never its bytes or their order. A value that is not a JSON object is
 * no lead (the click steps dead-letter it).
 */
export function isLeadRecord(
  headers: Readonly<Record<string, unknown>> | undefined,
  value: Buffer | null,
): boolean {
  const header = headers?.[RECORD_TYPE_HEADER];
  if (header !== undefined) {
    const one: unknown = Array.isArray(header) ? header[0] : header;
    return Buffer.isBuffer(one) ? one.equals(LEAD) : one === 'lead';
  }
  if (!value) return false;
  try {
    const m = JSON.parse(value.toString('utf8')) as unknown;
    return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'lead';
  } catch {
    return false;
  }
}
