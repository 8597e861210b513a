// User-Agent → device type / OS / browser, with ua-parser-js 1.x and a small LRU cache
// (the same few hundred UA strings make up most of the traffic).
import { createRequire } from 'node:module';
import { isBotUserAgent } from '../../../../shared/tracking/quality.ts';

export interface DeviceInfo {
  device_type: string;
  device_os: string | null;
  browser_name: string | null;
}

/** The parser function, plus the cache's current entry count (for tests and metrics). */
export interface UserAgentParser {
  (ua: string | null | undefined): DeviceInfo;
  readonly size: number;
}

// ua-parser-js 1.x is CommonJS and ships no type declarations (@types/ua-parser-js targets 0.7),
// so it is loaded through require() with the small slice of its API used here typed by hand.
interface UAParserInstance {
  setUA(ua: string): UAParserInstance;
  getBrowser(): { name?: string | undefined };
  getOS(): { name?: string | undefined };
  getDevice(): { type?: string | undefined };
}
type UAParserConstructor = new () => UAParserInstance;
const UAParser = createRequire(import.meta.url)('ua-parser-js') as UAParserConstructor;

export const MAX_UA_LENGTH = 512;
const DEFAULT_CACHE_SIZE = 10_000;

// Device types ua-parser-js can report (`xr` only exists from 2.x on; 1.x reports headsets as `wearable`).
const KNOWN_DEVICE_TYPES = new Set(['mobile', 'tablet', 'smarttv', 'wearable', 'console', 'embedded', 'xr']);

// ua-parser-js 1.x has no bot detection at all (Googlebot's smartphone UA parses as an Android phone):
// isbot plus the link-preview fetchers decide (shared/tracking/quality.ts), cached here with the rest.

const UNKNOWN: DeviceInfo = Object.freeze({ device_type: 'unknown', device_os: null, browser_name: null });

function nonEmpty(v: string | undefined): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export function createUserAgentParser(opts: { cacheSize?: number } = {}): UserAgentParser {
  const cacheSize = opts.cacheSize ?? DEFAULT_CACHE_SIZE;
  if (!Number.isInteger(cacheSize) || cacheSize < 0) {
    throw new RangeError(`cacheSize must be a non-negative integer, got ${cacheSize}`);
  }
  const parser = new UAParser();
  // Map iteration order is insertion order: the first key is the least recently used one.
  const cache = new Map<string, DeviceInfo>();

  const parse = (ua: string): DeviceInfo => {
    parser.setUA(ua);
    const os = nonEmpty(parser.getOS().name);
    const browser = nonEmpty(parser.getBrowser().name);
    const type = parser.getDevice().type;
    let deviceType: string;
    if (isBotUserAgent(ua)) {
      deviceType = 'bot';
    } else if (type && KNOWN_DEVICE_TYPES.has(type)) {
      deviceType = type;
    } else if (os !== null || browser !== null) {
      deviceType = 'desktop'; // desktop browsers carry no device type
    } else {
      deviceType = 'unknown'; // nothing recognisable, e.g. "foo" or an app's own HTTP client
    }
    return Object.freeze({ device_type: deviceType, device_os: os, browser_name: browser });
  };

  const lookup = (input: string | null | undefined): DeviceInfo => {
    if (typeof input !== 'string') return UNKNOWN;
    const ua = input.length > MAX_UA_LENGTH ? input.slice(0, MAX_UA_LENGTH) : input;
    if (ua.trim() === '') return UNKNOWN;
    if (cacheSize === 0) return parse(ua);
    const hit = cache.get(ua);
    if (hit !== undefined) {
      cache.delete(ua); // refresh recency
      cache.set(ua, hit);
      return hit;
    }
    const info = parse(ua);
    if (cache.size >= cacheSize) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(ua, info);
    return info;
  };

  return Object.defineProperty(lookup, 'size', {
    get: () => cache.size,
    enumerable: true,
  }) as UserAgentParser;
}
