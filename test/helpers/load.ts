// A bounded click load for crash tests: `concurrency` loops posting clicks until `durationMs` has passed
// (and never more than `maxRequests`), recording every answer.
import type { LinkFixture } from './stack.ts';

export interface LoadResult {
  accepted: { clickId: string; linkId: number; at: number }[];
  failed: number;
  other: number;
}

export async function clickLoad(opts: {
  baseUrl: string;
  links: LinkFixture[];
  durationMs: number;
  concurrency: number;
  maxRequests?: number;
}): Promise<LoadResult> {
  const result: LoadResult = { accepted: [], failed: 0, other: 0 };
  const end = Date.now() + opts.durationMs;
  const max = opts.maxRequests ?? 200_000;
  let sent = 0;
  const loop = async () => {
    while (Date.now() < end && sent < max) {
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
        } else result.other++;
      } catch {
        // Connection refused or reset while the ingress is down: not accepted, so not owed.
        result.failed++;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  return result;
}
