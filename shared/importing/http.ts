// The importer's GETs to a source's API (docs/importing.md "Rate limits", "Where an import may connect"):
// the adapter's credentials as headers, the source's rate limit kept (rate-limit.ts), a 429 waited out
// for as long as it asks (Retry-After, RateLimit-Reset), a 5xx or a dropped connection retried a few times
// with backoff, an answer read up to a bound and parsed as JSON. The address rules of outbound webhooks
// apply (shared/webhooks/address.ts): a private, loopback or metadata address only with
// WEBHOOK_ALLOW_PRIVATE=true, checked after DNS at each connection; redirects are not followed.
import http from 'node:http';
import https from 'node:https';
import { checkedAddresses, guardedLookup, hostOf, RefusedAddressError } from '../webhooks/address.ts';
import type { AddressPolicy } from '../webhooks/address.ts';
import { retryWaitMs } from './rate-limit.ts';
import type { SourceGet } from './types.ts';

/** A source's answer that ends the import (bad credentials, a 4xx, a source down past the retries). */
export class SourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceError';
  }
}

/** The options.api_base_url rules before any DNS: http(s), no user name or password. The error, or null. */
export function baseUrlError(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'options.api_base_url must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'options.api_base_url must be an absolute http:// or https:// URL';
  if (url.username !== '' || url.password !== '')
    return 'options.api_base_url must not contain a user name or password';
  return null;
}

/** The whole check of an api_base_url at creation: its rules, then each address it resolves to. */
export async function checkBaseUrl(text: string, policy: AddressPolicy): Promise<string | null> {
  const error = baseUrlError(text);
  if (error !== null) return error;
  try {
    await checkedAddresses(hostOf(new URL(text)), policy);
  } catch (err) {
    if (err instanceof RefusedAddressError)
      return `options.api_base_url: ${err.message.replace(/^url /, '').replace('webhooks are only sent to', 'imports only call')}`;
    throw err;
  }
  return null;
}

export interface ClientDeps {
  policy: AddressPolicy;
  /** One request's bound (connect, answer). */
  timeoutMs: number;
  /** The largest answer read (bytes). */
  maxBytes: number;
  /** Waits for the source's rate limit to allow a request, and counts it (rate-limit.ts); none: no limit. */
  acquire?(): Promise<void>;
  /** Waits `ms`; throws when the import was canceled meanwhile (or the process is stopping). */
  wait(ms: number): Promise<void>;
  /** How the source names itself in messages. */
  label: string;
  /** Tells of each wait for a 429 (metrics, logs, tests). */
  onRateLimited?(waitMs: number): void;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Consecutive 429s before the import gives up: the source keeps refusing whatever it was told. */
const MAX_RATE_LIMITED = 30;
/** The longest wait a 429 may ask for before the import gives up (an hour). */
const MAX_WAIT_MS = 3_600_000;
const SERVER_RETRIES = 5;

function request(url: URL, headers: Record<string, string>, deps: ClientDeps): Promise<Answer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'GET',
      lookup: guardedLookup(deps.policy) as unknown as http.RequestOptions['lookup'],
      headers: { accept: 'application/json', 'user-agent': 'svc-importer/1', ...headers },
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${deps.timeoutMs} ms`)),
      deps.timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > deps.maxBytes) {
          res.destroy();
          clearTimeout(timer);
          reject(new SourceError(`${deps.label} answered more than ${deps.maxBytes} bytes for one page`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.end();
  });
}

function query(url: URL, q: Record<string, string | string[]>) {
  for (const [k, v] of Object.entries(q)) {
    for (const one of [v].flat()) url.searchParams.append(k, one);
  }
}

/** GET with the source's credentials and rules; answers the parsed JSON or throws SourceError. */
export function sourceGet(baseUrl: string, headers: Record<string, string>, deps: ClientDeps): SourceGet {
  return async (path, q) => {
    const url = new URL(baseUrl.replace(/\/+$/, '') + path);
    query(url, q);
    const where = `GET ${url.pathname}`;
    let rateLimited = 0;
    let failures = 0;
    for (;;) {
      await deps.acquire?.();
      let answer: Answer;
      try {
        answer = await request(url, headers, deps);
      } catch (err) {
        if (err instanceof SourceError) throw err;
        const e = err as NodeJS.ErrnoException;
        if (e instanceof RefusedAddressError || e.code === 'EREFUSED_ADDRESS')
          throw new SourceError(`${deps.label} is not reachable: ${e.message}`);
        if (++failures > SERVER_RETRIES)
          throw new SourceError(`${deps.label} did not answer ${where}: ${e.message}`);
        await deps.wait(1000 * 2 ** (failures - 1));
        continue;
      }
      const { status } = answer;
      if (status === 429) {
        const wait = retryWaitMs(answer.headers, Date.now()) ?? Math.min(60_000, 1000 * 2 ** rateLimited);
        if (++rateLimited > MAX_RATE_LIMITED || wait > MAX_WAIT_MS)
          throw new SourceError(`${deps.label} kept answering 429 Too Many Requests to ${where}`);
        deps.onRateLimited?.(wait);
        await deps.wait(wait);
        continue;
      }
      if (status >= 500) {
        if (++failures > SERVER_RETRIES)
          throw new SourceError(`${deps.label} answered ${status} to ${where}`);
        await deps.wait(1000 * 2 ** (failures - 1));
        continue;
      }
      if (status === 401 || status === 403)
        throw new SourceError(
          `${deps.label} refused the credentials (${status}): check them and start again`,
        );
      if (status >= 300 && status < 400)
        throw new SourceError(
          `${deps.label} answered a redirect (${status}) to ${where}; redirects are not followed`,
        );
      if (status !== 200)
        throw new SourceError(
          `${deps.label} answered ${status} to ${where}: ${answer.body.toString('utf8').slice(0, 200)}`,
        );
      try {
        return JSON.parse(answer.body.toString('utf8')) as unknown;
      } catch {
        throw new SourceError(`${deps.label} answered ${where} with something that is not JSON`);
      }
    }
  };
}
