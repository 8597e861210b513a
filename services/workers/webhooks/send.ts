// One HTTP attempt of a webhook delivery: a POST of the signed body, bounded as a whole (connect, TLS,
// request, answer) by the timeout; redirects are not followed (a 3xx is the attempt's answer, and the
// caller counts it a failure); the answer's body is read up to 4 KB and the rest dropped. The connection
// goes only to the addresses the SSRF rules checked (shared/webhooks/address.ts): a name through the guarded
// lookup, an IP literal checked here, since Node does not look an IP literal up. `httpDelivery` is the
// delivery queue's HTTP transport (shared/delivery/queue.ts): it signs each attempt and says what the answer
// means (a 2xx delivers, a 410 is the dead end, a Retry-After is the receiver's wait).
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import {
  RefusedAddressError,
  checkedAddresses,
  guardedLookup,
  hostOf,
  urlError,
} from '../../../shared/webhooks/address.ts';
import type { AddressPolicy } from '../../../shared/webhooks/address.ts';
import { signedHeaders } from '../../../shared/webhooks/signature.ts';
import type { Attempted } from '../../../shared/delivery/outcome.ts';
import type { Transport } from '../../../shared/delivery/queue.ts';

/** What one attempt sends, and where. */
export interface WebhookDelivery {
  webhook_id: string;
  endpoint_id: string;
  workspace_id: string;
  type: string;
  /** The exact body of every attempt. */
  body: string;
  url: string;
  secret: string;
  /** Still signing for 24 hours after a rotation; null otherwise. */
  previous_secret: string | null;
}

/** How much of an answer's body is kept (for the delivery log). */
export const RESPONSE_LIMIT = 4096;

export interface AttemptResult {
  /** The answer's status, or null when there was none (refused, timeout, connection error). */
  statusCode: number | null;
  /** The first RESPONSE_LIMIT bytes of the answer's body, as text. */
  response: string | null;
  /** Why the attempt failed without an answer (or what the answer was, for a redirect). */
  error: string | null;
  retryAfter: string | undefined;
  durationMs: number;
}

export interface Sender {
  send(
    url: string,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<AttemptResult>;
  close(): void;
}

export function createSender(opts: { policy: AddressPolicy; timeoutMs: number; maxSockets: number }): Sender {
  const { policy, timeoutMs } = opts;
  const lookup = guardedLookup(policy);
  // Connections kept alive per endpoint: at a steady rate most attempts skip the connect and TLS.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets, timeout: timeoutMs }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: opts.maxSockets, timeout: timeoutMs }),
  };

  async function send(
    url: string,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<AttemptResult> {
    const started = performance.now();
    const done = (r: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({
      ...r,
      durationMs: Math.round(performance.now() - started),
    });
    const failed = (error: string) =>
      done({ statusCode: null, response: null, error, retryAfter: undefined });
    // The URL's own rules again (WEBHOOK_ALLOW_PRIVATE may have changed since registration).
    const invalid = urlError(url, policy);
    if (invalid !== null) return failed(`refused: ${invalid}`);
    const target = new URL(url);
    if (isIP(hostOf(target)) !== 0) {
      try {
        await checkedAddresses(hostOf(target), policy);
      } catch (err) {
        return failed(`refused: ${(err as Error).message}`);
      }
    }
    const client = target.protocol === 'https:' ? https : http;
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (r: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const req = client.request(target, {
        method: 'POST',
        agent: agents[target.protocol as 'http:' | 'https:'],
        lookup: lookup as unknown as http.RequestOptions['lookup'],
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'svc-webhooks/1',
          ...headers,
        },
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = () => req.destroy(new Error('aborted: the worker is shutting down'));
      signal?.addEventListener('abort', onAbort);
      req.on('error', (err: NodeJS.ErrnoException) => {
        const refused = err instanceof RefusedAddressError || err.code === 'EREFUSED_ADDRESS';
        finish(failed(refused ? `refused: ${err.message}` : describe(err)));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const end = () => {
          const text = Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString('utf8');
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          finish(
            done({
              statusCode: status,
              response: text,
              error:
                status >= 300 && status < 400
                  ? `redirect not followed${location ? ` (to ${String(location).slice(0, 200)})` : ''}`
                  : null,
              retryAfter: res.headers['retry-after'],
            }),
          );
        };
        res.on('data', (chunk: Buffer) => {
          if (size >= RESPONSE_LIMIT) return;
          chunks.push(chunk);
          size += chunk.length;
          // Enough for the log: the rest is not read (the connection is dropped rather than drained).
          if (size >= RESPONSE_LIMIT) {
            end();
            res.destroy();
          }
        });
        res.on('end', end);
        res.on('error', () => end());
        res.on('close', end);
      });
      req.end(body);
    });
  }

  return {
    send,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function describe(err: NodeJS.ErrnoException): string {
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return `host not found (${err.code})`;
  if (
    err.code?.startsWith('ERR_TLS') ||
    err.code?.includes('CERT') ||
    err.code === 'DEPTH_ZERO_SELF_SIGNED_CERT'
  )
    return `TLS: ${err.message}`;
  return err.message || String(err.code ?? 'error');
}

/**
 * A Retry-After header (seconds, or an HTTP date) as milliseconds from `now`, on the statuses where
 * Standard Webhooks says to honour it (429, 502, 503, 504); null otherwise or when it does not parse.
 */
export function retryAfterMs(status: number, header: string | undefined, now = Date.now()): number | null {
  if (![429, 502, 503, 504].includes(status) || header === undefined) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** What an answer means: a 2xx delivers; anything else fails the attempt (a 3xx too), 410 for good. */
export function answerOf(result: AttemptResult): Attempted<AttemptResult> {
  const code = result.statusCode;
  if (code !== null && code >= 200 && code < 300) return { type: 'accepted', detail: result };
  return {
    type: 'failed',
    error: result.error ?? (code !== null ? `HTTP ${code}` : 'failed'),
    answered: code !== null,
    gone: code === 410,
    retryAfterMs: code === null ? null : retryAfterMs(code, result.retryAfter),
    detail: result,
  };
}

/** The queue's HTTP transport: each attempt signed with the endpoint's secrets at the attempt's time. */
export function httpDelivery(sender: Sender): Transport<WebhookDelivery, AttemptResult> {
  return {
    async send(job, at, signal) {
      const d = job.payload;
      const secrets = d.previous_secret === null ? [d.secret] : [d.secret, d.previous_secret];
      const headers = signedHeaders(secrets, d.webhook_id, at, d.body);
      return answerOf(await sender.send(d.url, headers, d.body, signal));
    },
    close: () => sender.close(),
  };
}
