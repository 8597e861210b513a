// A click load for crash and fault tests, bounded by count and time but never by throughput: it runs
// until stopped (or `maxMs`, `maxRequests`), and a test waits for "n more clicks accepted" between its
// faults, so a slow machine only makes the test take longer, never fail.
import type { LinkFixture } from './stack.ts';

export interface LoadResult {
  accepted: { clickId: string; linkId: number; at: number }[];
  failed: number;
  other: number;
}

export interface ClickLoad {
  /** The answers so far (grows while the load runs). */
  result: LoadResult;
  /** Resolves once `n` more clicks were accepted after this call; rejects after `maxMs` naming `what`. */
  acceptMore(n: number, what: string, maxMs?: number): Promise<void>;
  /** Stops the loops and resolves with every answer once the requests in flight have returned. */
  stop(): Promise<LoadResult>;
}

export function clickLoad(opts: {
  baseUrl: string;
  links: LinkFixture[];
  concurrency: number;
  /** A generous bound: the load stops by itself after this long (default 180 s). */
  maxMs?: number;
  maxRequests?: number;
}): ClickLoad {
  const result: LoadResult = { accepted: [], failed: 0, other: 0 };
  const end = Date.now() + (opts.maxMs ?? 180_000);
  const max = opts.maxRequests ?? 200_000;
  let stopped = false;
  let sent = 0;
  const waiters = new Set<{ target: number; resolve: () => void }>();
  const onAccepted = () => {
    for (const w of waiters) {
      if (result.accepted.length >= w.target) {
        waiters.delete(w);
        w.resolve();
      }
    }
  };
  const loop = async () => {
    while (!stopped && Date.now() < end && sent < max) {
      const link = opts.links[sent++ % opts.links.length]!;
      try {
        const res = await fetch(`${opts.baseUrl}/api/v1/track/click`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ affiliate_url: `https://load.example/?aff=${link.shortLink}` }),
          signal: AbortSignal.timeout(10_000),
        });
        const body = (await res.json()) as { success?: boolean; click_id?: string };
        if (res.status === 200 && body.success === true && body.click_id) {
          result.accepted.push({ clickId: body.click_id, linkId: link.id, at: Date.now() });
          onAccepted();
        } else result.other++;
      } catch {
        // Connection refused or reset while the ingress is down: not accepted, so not owed.
        result.failed++;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const done = Promise.all(Array.from({ length: opts.concurrency }, loop)).then(() => result);
  return {
    result,
    acceptMore(n, what, maxMs = 120_000) {
      const target = result.accepted.length + n;
      if (n <= 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const w = {
          target,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          const got = result.accepted.length - (target - n);
          reject(new Error(`${what}: ${got} of ${n} clicks accepted in ${maxMs} ms`));
        }, maxMs);
        waiters.add(w);
      });
    },
    async stop() {
      stopped = true;
      return done;
    },
  };
}
