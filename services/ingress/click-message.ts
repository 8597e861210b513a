// The click body's schema (spec 4.1), what a checked body says, and the message produced for the click
// worker. Pure; the route (routes/click.ts) resolves the link and program from the cache between them.
import { createHash } from 'node:crypto';
import { HttpError } from '../../shared/http/server.ts';
import { truncate } from '../../shared/json.ts';
import { EVENT_DERIVED_BIT, formatClickId, parseClickId } from '../../shared/domain/ids.ts';
import { CLICK_TEXT_FIELDS, TEXT_LIMITS, UUID_RE } from '../../shared/contracts/clicks.ts';
import type { ClickMessage } from '../../shared/contracts/clicks.ts';
import { Type } from '@sinclair/typebox';
import type { Static, TNull, TOptional, TString, TUnion } from '@sinclair/typebox';
import { Checked, Nullable } from '../../shared/http/validation.ts';
import { AdditionalData, additionalData } from './input.ts';
import type { AdditionalDataInput } from './input.ts';
import type { CachedLink } from './tracking-cache.ts';
import type { ClickQuality } from '../../shared/tracking/quality.ts';

type ClickText = Pick<ClickMessage, (typeof CLICK_TEXT_FIELDS)[number]>;

type AffResult = { aff: string } | { error: string };
/** The `aff` of a fully qualified http(s) affiliate_url, or which of the spec's three 400s it is. */
function readAffiliateUrl(affiliateUrl: unknown): AffResult {
  if (affiliateUrl === undefined || affiliateUrl === null || affiliateUrl === '') {
    return { error: 'affiliate_url is required' };
  }
  if (typeof affiliateUrl !== 'string') return { error: 'Invalid affiliate_url' };
  let url: URL;
  try {
    url = new URL(affiliateUrl.trim());
  } catch {
    return { error: 'Invalid affiliate_url' };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    return { error: 'Invalid affiliate_url' };
  }
  const aff = url.searchParams.get('aff');
  if (aff === null || aff.trim() === '') return { error: 'No aff parameter found in affiliate_url' };
  return { aff: aff.trim() };
}

// The schema's check and the handler read the same URL one after the other: parse it once.
let lastUrl: string | undefined;
let lastResult: AffResult = { error: 'affiliate_url is required' };
function affiliateUrl(v: unknown): AffResult {
  if (typeof v !== 'string') return readAffiliateUrl(v);
  if (v !== lastUrl) {
    lastResult = readAffiliateUrl(v);
    lastUrl = v;
  }
  return lastResult;
}

/** The spec's 400 for an affiliate_url, or null when it names an aff. */
export function affiliateUrlError(v: unknown): string | null {
  const r = affiliateUrl(v);
  return 'error' in r ? r.error : null;
}

/** The `aff` value of a fully qualified http(s) affiliate_url, with the spec's three 400s. */
export function extractAff(v: unknown): string {
  const r = affiliateUrl(v);
  if ('error' in r) throw new HttpError(400, r.error);
  return r.aff;
}

/** Referral codes that can exist at all; anything else is not looked up. */
export const AFF_RE = /^[A-Za-z0-9_-]{1,64}$/;

export const EVENT_ID_INVALID = 'event_id must be a UUID';

const TEXT_DOCS: Partial<Record<keyof ClickText, string>> = {
  user_agent: 'Falls back to the User-Agent header.',
  screen_resolution: 'For example 1920x1080.',
  timezone: 'IANA timezone name.',
};
const textFields = Object.fromEntries(
  CLICK_TEXT_FIELDS.map((f) => [
    f,
    Type.Optional(
      Nullable(
        Type.String({
          description: `${TEXT_DOCS[f] ?? ''} Longer than ${TEXT_LIMITS[f]}: truncated.`.trim(),
        }),
        `${f} must be a string`,
      ),
    ),
  ]),
) as Record<keyof ClickText, TOptional<TUnion<[TString, TNull]>>>;

/** A click body (spec 4.1); the order of the properties is the order its errors are reported in. */
export const ClickBody = Type.Object({
  affiliate_url: Checked<string>(
    {
      type: 'string',
      minLength: 1,
      description:
        'A full http(s) URL with a non-empty `aff` query parameter (the referral code). Errors: ' +
        '`affiliate_url is required`, `Invalid affiliate_url`, `No aff parameter found in affiliate_url`.',
    },
    affiliateUrlError,
  ),
  additional_data: AdditionalData,
  event_id: Type.Optional(
    Nullable(
      Type.String({
        pattern: UUID_RE.source.replace(/a-f/g, 'a-fA-F'),
        description:
          "Beyond the spec: the caller's own id of this click (a UUID, any case). A retry with the same " +
          'event_id for the same program is stored once and answered with the same click_id (the tracker ' +
          'script sends one).',
      }),
      EVENT_ID_INVALID,
    ),
  ),
  existing_click_id: Type.Optional(
    Nullable(
      Type.String({
        description:
          'Reuse this customer when it belongs to the same program and partner; otherwise a new click_id.',
      }),
      'existing_click_id must be a string',
    ),
  ),
  ...textFields,
});
export type ClickBody = Static<typeof ClickBody>;

export interface ClickInput {
  aff: string;
  /** The caller's id of this click (a UUID, lower case), or null: retries with it are stored once. */
  eventId: string | null;
  ad: AdditionalDataInput;
  existingClickId: string | null;
  text: ClickText;
}

/** What a checked click body says; the User-Agent header fills in a missing user_agent. */
export function clickInput(body: ClickBody, userAgentHeader: string | undefined): ClickInput {
  const text: Record<string, string | null> = {};
  for (const f of CLICK_TEXT_FIELDS) {
    const v = body[f];
    // Cap the length rather than reject a long page title (NULs are already gone: installJsonHandling).
    text[f] = typeof v === 'string' ? truncate(v, TEXT_LIMITS[f]) : null;
  }
  if (text.user_agent === null && userAgentHeader) {
    text.user_agent = truncate(userAgentHeader, TEXT_LIMITS.user_agent);
  }
  return {
    aff: extractAff(body.affiliate_url),
    ad: additionalData(body.additional_data),
    eventId: body.event_id ? body.event_id.toLowerCase() : null,
    existingClickId: body.existing_click_id ?? null,
    text: text as ClickText,
  };
}

/**
 * The id a click with an event_id gets, derived from (program, event_id) instead of minted: every ingress
 * process answers a retry with the same click_id at once, even while the first attempt is still in Kafka,
 * with no lookup. 62 bits of SHA-256 with EVENT_DERIVED_BIT set (a 63-bit number, like a snowflake), so a
 * sale naming it knows it carries no time and waits for its click by the sale's own time instead.
 */
export function eventClickNumber(programId: number, eventId: string): bigint {
  const digest = createHash('sha256').update(`click:${programId}:${eventId}`).digest();
  return (digest.readBigUInt64BE(0) & (EVENT_DERIVED_BIT - 1n)) | EVENT_DERIVED_BIT;
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
  /** shared/tracking/quality.ts clickQuality of the request. */
  quality?: ClickQuality;
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
    // Only for a bot or a prefetch, like client_event_id: a person's click is the same message as before.
    ...(e.quality === 'bot' || e.quality === 'prefetch' ? { quality: e.quality } : {}),
    ip: e.ip,
    ...e.text,
  };
}
