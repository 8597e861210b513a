// Per-client-IP token buckets on the browser-facing tracking routes (click, lead): an empty bucket answers
// 429 with Retry-After. Per process: see docs/ingress.md for what that means with several instances.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../shared/http/server.ts';

export interface RateLimitOptions {
  /** Sustained requests per minute per IP; 0 turns limiting off. */
  perMinute: number;
  /** Requests an idle IP may send at once. */
  burst: number;
  /** IPs never limited (the local proxy, health checks). */
  exempt: string[];
  maxTracked?: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly opts: Required<RateLimitOptions>;
  private readonly exempt: Set<string>;

  constructor(opts: RateLimitOptions) {
    this.opts = { maxTracked: 200_000, ...opts };
    this.exempt = new Set(opts.exempt);
  }

  /** Throws 429 (with Retry-After) when the caller's bucket is empty. */
  check(req: FastifyRequest, reply: FastifyReply): void {
    if (this.opts.perMinute <= 0) return;
    const ip = req.ip;
    if (this.exempt.has(ip)) return;
    const now = Date.now();
    const ratePerMs = this.opts.perMinute / 60_000;
    let b = this.buckets.get(ip);
    if (!b) {
      if (this.buckets.size >= this.opts.maxTracked) this.prune(now, ratePerMs);
      b = { tokens: this.opts.burst, at: now };
      this.buckets.set(ip, b);
    } else {
      b.tokens = Math.min(this.opts.burst, b.tokens + (now - b.at) * ratePerMs);
      b.at = now;
    }
    if (b.tokens < 1) {
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000));
      reply.header('retry-after', String(wait));
      throw new HttpError(429, 'Too many requests from this address; retry later');
    }
    b.tokens -= 1;
  }

  /** Drops buckets that have refilled completely (they behave like new ones). */
  private prune(now: number, ratePerMs: number): void {
    for (const [ip, b] of this.buckets) {
      if (b.tokens + (now - b.at) * ratePerMs >= this.opts.burst) this.buckets.delete(ip);
    }
  }
}
