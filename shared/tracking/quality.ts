// What kind of visit a click is (CONTRACT part three "Traffic quality and fraud"; docs/pipeline.md "Bots and
// prefetches"): `human`, `bot` (the `isbot` package's list, plus the link-preview fetchers of chat apps and
// social networks, which a later isbot release must not turn back into people) or `prefetch` (a browser
// fetching a link before anyone followed it: `Sec-Purpose: prefetch`, older `Purpose: prefetch`). Only
// human clicks are counted; bot and prefetch clicks are stored with their quality and never attribute a sale
// silently. Pure (the classifier's cache is its only state).
import { isbot } from 'isbot';

export const CLICK_QUALITIES = ['human', 'bot', 'prefetch'] as const;
export type ClickQuality = (typeof CLICK_QUALITIES)[number];
/** The qualities left out of every counter, chart and breakdown. */
export const FILTERED_QUALITIES = ['bot', 'prefetch'] as const satisfies readonly ClickQuality[];
export type FilteredQuality = (typeof FILTERED_QUALITIES)[number];

/**
 * Link-preview fetchers: Slack, WhatsApp, Telegram, Discord, iMessage (Apple's
 * `facebookexternalhit/1.1 Facebot Twitterbot/1.0`), LinkedIn, Facebook, Twitter/X. Anchored on the
 * fetchers' own product tokens, so a phone named "Cubot" stays a person.
 */
const LINK_PREVIEW_RE =
  /slackbot|slack-imgproxy|whatsapp\/|telegrambot|discordbot|facebookexternalhit|facebot|linkedinbot|twitterbot/i;

/**
 * The User-Agent of an HTTP library or command-line client (what an SDK, curl or a backend's own HTTP
 * client sends). In a request's header it names the caller, a server reporting a visit, not the visitor:
 * see classifyClick.
 */
const HTTP_CLIENT_RE =
  /^(?:node|undici|node-fetch|axios|got|curl|wget|httpie|python-requests|python-urllib|python-httpx|python\/|aiohttp|go-http-client|okhttp|java\/|apache-httpclient|ruby|faraday|guzzlehttp|php|dart|svc-sdk)(?:[/\s;(]|$)/i;

/** Whether a user agent is a crawler, a script's HTTP client or a link-preview fetcher. */
export function isBotUserAgent(ua: string | null | undefined): boolean {
  if (typeof ua !== 'string' || ua.trim() === '') return false;
  return LINK_PREVIEW_RE.test(ua) || isbot(ua);
}

/** A header's values as one string (Node gives a repeated header as an array). */
const headerText = (v: string | string[] | undefined): string =>
  v === undefined ? '' : Array.isArray(v) ? v.join(',') : v;

/**
 * Whether the request is a speculative fetch: `Sec-Purpose: prefetch` (Chrome; also `prefetch;prerender`
 * and `prefetch;anonymous-client-ip`), the older `Purpose: prefetch`, Firefox's `X-Moz: prefetch` or
 * Safari's `X-Purpose: preview`. Header names as Node gives them, lower case.
 */
export function isPrefetch(headers: Record<string, string | string[] | undefined>): boolean {
  for (const name of ['sec-purpose', 'purpose', 'x-purpose', 'x-moz']) {
    const v = headerText(headers[name]).toLowerCase();
    if (v !== '' && /(^|[\s,;])(prefetch|preview)($|[\s,;])/.test(v)) return true;
  }
  return false;
}

export interface ClickRequest {
  /** The click body's `user_agent` (what a backend relays of its visitor), or null when none was sent. */
  bodyUserAgent: string | null;
  /** The request's User-Agent header. */
  headerUserAgent: string | null | undefined;
  /** isPrefetch of the request's headers. */
  prefetch: boolean;
}

/**
 * A click's quality. A prefetch first (whoever sent it). Then the visitor's user agent: the body's
 * `user_agent` when sent, else the User-Agent header. A header naming an HTTP library (an SDK, curl, a
 * backend's client) is the integration's own, not a visitor's: such a click is counted as a person's, as
 * before (a backend names its visitor in `user_agent`, and that one is judged).
 */
export function clickQuality(r: ClickRequest, isBot: (ua: string) => boolean = isBotUserAgent): ClickQuality {
  if (r.prefetch) return 'prefetch';
  if (r.bodyUserAgent !== null && r.bodyUserAgent.trim() !== '') {
    return isBot(r.bodyUserAgent) ? 'bot' : 'human';
  }
  const ua = r.headerUserAgent;
  if (typeof ua !== 'string' || ua.trim() === '' || HTTP_CLIENT_RE.test(ua.trimStart())) return 'human';
  return isBot(ua) ? 'bot' : 'human';
}

/**
 * isBotUserAgent with an LRU of `size` user agents (the same few hundred make up most traffic): what the
 * ingress calls per click, so that the classifier costs a map lookup on the hot path.
 */
export function cachedBotCheck(size = 2000): (ua: string) => boolean {
  const cache = new Map<string, boolean>();
  return (ua) => {
    const hit = cache.get(ua);
    if (hit !== undefined) {
      cache.delete(ua);
      cache.set(ua, hit);
      return hit;
    }
    const v = isBotUserAgent(ua);
    if (cache.size >= size) cache.delete(cache.keys().next().value!);
    cache.set(ua, v);
    return v;
  };
}

export const isClickQuality = (v: unknown): v is ClickQuality =>
  typeof v === 'string' && (CLICK_QUALITIES as readonly string[]).includes(v);
