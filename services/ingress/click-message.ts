// The input rules of a click (spec 4.1) and the message produced for the click worker. Pure; the route
// (routes/click.ts) resolves the link and program from the cache between them.
import { createHash } from 'node:crypto';
import { HttpError } from '../../shared/http/server.ts';
import { truncate } from '../../shared/json.ts';
import { formatClickId, parseClickId } from '../../shared/domain/ids.ts';
import { CLICK_TEXT_FIELDS, TEXT_LIMITS, UUID_RE } from '../../shared/contracts/clicks.ts';
import type { ClickMessage } from '../../shared/contracts/clicks.ts';
import { parseAdditionalData } from './input.ts';
import type { AdditionalData } from './input.ts';
import type { CachedLink } from './tracking-cache.ts';

type ClickText = Pick<ClickMessage, (typeof CLICK_TEXT_FIELDS)[number]>;

/** The `aff` value of a fully qualified http(s) affiliate_url, with the spec's three 400s. */
export function extractAff(affiliateUrl: unknown): string {
  if (affiliateUrl === undefined || affiliateUrl === null || affiliateUrl === '') {
    throw new HttpError(400, 'affiliate_url is required');
  }
  if (typeof affiliateUrl !== 'string') throw new HttpError(400, 'Invalid affiliate_url');
  let url: URL;
  try {
    url = new URL(affiliateUrl.trim());
  } catch {
    throw new HttpError(400, 'Invalid affiliate_url');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new HttpError(400, 'Invalid affiliate_url');
  }
  const aff = url.searchParams.get('aff');
  if (aff === null || aff.trim() === '') throw new HttpError(400, 'No aff parameter found in affiliate_url');
  return aff.trim();
}

/** Referral codes that can exist at all; anything else is not looked up. */
export const AFF_RE = /^[A-Za-z0-9_-]{1,64}$/;

export interface ClickInput {
  aff: string;
  /** The caller's id of this click (a UUID, lower case), or null: retries with it are stored once. */
  eventId: string | null;
  ad: AdditionalData;
  existingClickId: string | null;
  text: ClickText;
}

/** The body in the order its errors are reported; the User-Agent header fills in a missing user_agent. */
export function parseClickBody(
  body: Record<string, unknown>,
  userAgentHeader: string | undefined,
): ClickInput {
  const aff = extractAff(body.affiliate_url);
  const ad = parseAdditionalData(body);
  const eventId = parseEventId(body.event_id);
  const existing = body.existing_click_id;
  if (existing !== undefined && existing !== null && typeof existing !== 'string') {
    throw new HttpError(400, 'existing_click_id must be a string');
  }
  const text: Record<string, string | null> = {};
  for (const f of CLICK_TEXT_FIELDS) {
    const v = body[f];
    if (v === undefined || v === null) text[f] = null;
    else if (typeof v !== 'string') throw new HttpError(400, `${f} must be a string`);
    // Cap the length rather than reject a long page title (NULs are already gone: installJsonHandling).
    else text[f] = truncate(v, TEXT_LIMITS[f]);
  }
  if (text.user_agent === null && userAgentHeader) {
    text.user_agent = truncate(userAgentHeader, TEXT_LIMITS.user_agent);
  }
  return { aff, ad, eventId, existingClickId: existing ?? null, text: text as ClickText };
}

export const EVENT_ID_INVALID = 'event_id must be a UUID';

/** The optional `event_id` of a click body: a UUID (any version), normalised to lower case. */
export function parseEventId(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !UUID_RE.test(v)) throw new HttpError(400, EVENT_ID_INVALID);
  return v.toLowerCase();
}

/**
 * The id a click with an event_id gets, derived from (program, event_id) instead of minted: every ingress
 * process answers a retry with the same click_id at once, even while the first attempt is still in Kafka,
 * with no lookup. 63 bits of SHA-256, like a snowflake's range, never 0.
 */
export function eventClickNumber(programId: number, eventId: string): bigint {
  const digest = createHash('sha256').update(`click:${programId}:${eventId}`).digest();
  const n = digest.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
  return n === 0n ? 1n : n;
}

/** Reuse the click id only for the same partner-program (same program and partner); else last touch wins. */
export function clickIdFor(existing: string | null, partnerProgramId: number, id: bigint): string {
  const prior = parseClickId(existing);
  return prior && prior.partnerProgramId === String(partnerProgramId)
    ? (existing as string)
    : formatClickId(partnerProgramId, id);
}

export interface ClickEvent {
  id: bigint;
  ms: number;
  programId: number;
  /** The link, when it belongs to programId (a test click may name a program without one). */
  link: CachedLink | null;
  /** null for a test click: it creates no customer. */
  clickId: string | null;
  /** The caller's event_id, or null. */
  clientEventId?: string | null;
  ip: string | null;
  text: ClickText;
}

export function buildClickMessage(e: ClickEvent): ClickMessage {
  return {
    v: 1,
    type: 'click',
    event_id: e.id.toString(),
    // Only when sent: a click without one is the same message as before event ids existed.
    ...(e.clientEventId ? { client_event_id: e.clientEventId } : {}),
    ts: e.ms,
    program_id: e.programId,
    link_id: e.link?.id ?? null,
    partner_id: e.link?.partnerId ?? null,
    partner_program_id: e.link?.partnerProgramId ?? null,
    click_id: e.clickId,
    is_test: e.clickId === null,
    ip: e.ip,
    ...e.text,
  };
}
