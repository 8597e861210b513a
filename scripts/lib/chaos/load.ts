// The load of `npm run chaos`: a steady mix of clicks (with event_ids), leads, sales and refunds, every
// request retried as a careful client would (clicks with the same event_id, commands with the same
// Idempotency-Key), and every attempt and logical request recorded for the accounting afterwards.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../../shared/db/sql.ts';
import { seedBenchProgram } from '../bench/seed.ts';

export type Kind = 'click' | 'lead' | 'sale' | 'refund';
export const KINDS: Kind[] = ['click', 'lead', 'sale', 'refund'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Attempt {
  kind: Kind;
  sent: number;
  answered: number;
  /** HTTP status, or 'refused', 'reset', 'timeout'. */
  status: number | string;
}

export interface Logical {
  kind: Kind;
  phase: number;
  ok: boolean;
  /** What to look up afterwards: click_id, transaction_id, click_id of the lead, transaction_id refunded. */
  ref: string;
  answer?: Record<string, unknown>;
  /** A click sent as a crawler's (issue 31): stored as `bot`, counted nowhere. */
  bot?: boolean;
  /** A click's event_id: a click stored without a 200 (a 503 recorded anyway) is told by it. */
  eventId?: string;
}

/** One click in 50 is a crawler's: the accounting counts human and filtered clicks apart. */
export const CHAOS_BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

export interface ChaosSeed {
  token: string;
  programId: number;
  leadClicks: string[];
  saleClicks: string[];
  links: string[];
}

/**
 * The bench program (2000 customers with clicks: the first 1000 for leads, the rest for sales) and three
 * more links of its partner.
 */
export async function seedChaos(sql: Sql): Promise<ChaosSeed> {
  const bench = await seedBenchProgram(sql, { customers: 2000, customerKeys: false });
  const [pp] = await sql<{ id: string; partner_id: string }[]>`
    select id, partner_id from partner_programs where program_id = ${bench.programId}`;
  const links = ['bench'];
  for (let i = 0; i < 3; i++) {
    const short = `chaos-${i}`;
    await sql`insert into referral_links (short_link, program_id, partner_id, partner_program_id)
              values (${short}, ${bench.programId}, ${pp!.partner_id}, ${pp!.id})`;
    links.push(short);
  }
  return {
    token: bench.token,
    programId: bench.programId,
    leadClicks: bench.clickIds.slice(0, 1000),
    saleClicks: bench.clickIds.slice(1000),
    links,
  };
}

/** One line of --trace (nothing without it). */
export type Trace = (what: Record<string, unknown>) => unknown;

export class ChaosLoad {
  readonly attempts: Attempt[] = [];
  readonly logical: Logical[] = [];
  /** The fault under way (0: warm-up); each request counts under the phase it was sent in. */
  phase = 0;
  stopped = false;
  private readonly okSales: string[] = [];
  /** Clicks answered 200, for leads once the seeded lead clicks are used up. */
  private readonly okClicks: string[] = [];
  private nextLead = 0;
  private seq = 0;

  private readonly baseUrl: string;
  private readonly seed: ChaosSeed;
  private readonly trace: Trace;
  private readonly t0: number;

  constructor(baseUrl: string, seed: ChaosSeed, trace: Trace, t0: number) {
    this.baseUrl = baseUrl;
    this.seed = seed;
    this.trace = trace;
    this.t0 = t0;
  }

  async post(kind: Kind, path: string, body: unknown, headers: Record<string, string>) {
    const sent = Date.now();
    let status: number | string;
    let json: Record<string, unknown> = {};
    try {
      const res = await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
      json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string } };
      status =
        e.name === 'TimeoutError'
          ? 'timeout'
          : e.cause?.code === 'ECONNREFUSED'
            ? 'refused'
            : (e.cause?.code ?? 'network error');
    }
    this.attempts.push({ kind, sent, answered: Date.now(), status });
    if (status !== 200 || Date.now() - sent > 1000)
      this.trace({
        ev: status === 200 ? 'slow' : 'failed',
        kind,
        sent: sent - this.t0,
        status,
        error: json.error,
      });
    return { status, json };
  }

  /** One logical request, retried (same event_id / Idempotency-Key) on 5xx or a network error, 4 tries. */
  async request(kind: Kind, path: string, body: unknown, headers: Record<string, string>, ref: string) {
    const l: Logical = { kind, phase: this.phase, ok: false, ref };
    this.logical.push(l);
    for (let i = 0; i < 4 && !this.stopped; i++) {
      const r = await this.post(kind, path, body, headers);
      if (r.status === 200) {
        l.ok = true;
        l.answer = r.json;
        return l;
      }
      if (typeof r.status === 'number' && r.status < 500) {
        l.answer = r.json;
        return l; // a 4xx is an answer; retrying it would not change it
      }
      await sleep(Math.min(2000, 250 * 2 ** i));
    }
    return l;
  }

  /** One load loop, until stopped. */
  async loop(): Promise<void> {
    const auth = { authorization: `Bearer ${this.seed.token}` };
    while (!this.stopped) {
      const n = ++this.seq;
      const roll = n % 10;
      if (roll < 6) {
        const eventId = randomUUID();
        const link = this.seed.links[n % this.seed.links.length]!;
        const bot = n % 50 === 0;
        const l = await this.request(
          'click',
          '/api/v1/track/click',
          {
            affiliate_url: `https://chaos.example/?aff=${link}`,
            event_id: eventId,
            ...(bot ? { user_agent: CHAOS_BOT_UA } : {}),
          },
          {},
          '',
        );
        l.eventId = eventId;
        if (bot) l.bot = true;
        if (l.ok) {
          l.ref = String(l.answer?.click_id);
          if (!bot && this.okClicks.length < 5000) this.okClicks.push(l.ref);
        }
      } else if (roll === 6 && (this.nextLead < this.seed.leadClicks.length || this.okClicks.length > 0)) {
        // The seeded clicks first, then clicks of this run (a quiet machine uses up the seed in minutes).
        const clickId =
          this.nextLead < this.seed.leadClicks.length
            ? this.seed.leadClicks[this.nextLead++]!
            : this.okClicks.shift()!;
        await this.request(
          'lead',
          '/api/v1/track/lead',
          { click_id: clickId, customer_key: `chaos-${clickId}` },
          { 'idempotency-key': `lead-${clickId}` },
          clickId,
        );
      } else if (roll === 9 && this.okSales.length > 0) {
        const txn = this.okSales.splice(Math.floor(Math.random() * this.okSales.length), 1)[0]!;
        await this.request(
          'refund',
          '/api/v1/track/refund',
          { transaction_id: txn },
          { ...auth, 'idempotency-key': `refund-${txn}` },
          txn,
        );
      } else {
        const txn = `chaos-${n}`;
        const l = await this.request(
          'sale',
          '/api/v1/track/sale',
          {
            transaction_id: txn,
            amount_cents: 1000 + (n % 50),
            click_id: this.seed.saleClicks[n % this.seed.saleClicks.length],
          },
          { ...auth, 'idempotency-key': `sale-${txn}` },
          txn,
        );
        if (l.ok) this.okSales.push(txn);
      }
    }
  }

  /** Waits until every kind had a 200 answer to a request sent after `since` (or `boundMs` passes). */
  async settle(since: number, boundMs: number): Promise<boolean> {
    const deadline = Date.now() + boundMs;
    for (;;) {
      const back = KINDS.filter((k) =>
        this.attempts.some((a) => a.kind === k && a.sent >= since && a.status === 200),
      );
      if (back.length === KINDS.length) return true;
      if (Date.now() > deadline) return false;
      await sleep(200);
    }
  }
}
