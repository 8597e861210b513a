// One HTTP attempt of a webhook delivery: a POST of the signed body, bounded as a whole (connect, TLS,
// request, answer) by the timeout; redirects are not followed (a 3xx is the attempt's answer, and the
// caller counts it a failure); the answer's body is read up to 4 KB and the rest dropped. The connection
// goes only to the addresses the SSRF rules checked (shared/webhooks/address.ts): a name through the guarded
// lookup, an IP literal checked here, since Node does not look an IP literal up.
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
