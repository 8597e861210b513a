// The reply channel of commands with an answer: the worker records the outcome and NOTIFYs on commit;
// the ingress's OutcomeWaiter listens, with a read of the outcome rows as fallback. See docs/pipeline.md.
import type { Sql, Tx } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import type { Command, Effect } from '../contracts/commands.ts';
import { outageWarning } from './dependencies.ts';
import { startPeriodic } from './periodic.ts';
import type { RunningTask } from './periodic.ts';

export const OUTCOME_CHANNEL = 'command_outcomes';

export interface Outcome {
  statusCode: number;
  body: Record<string, unknown>;
  /** The hash of the parameters of the request that produced it (Idempotency-Key requests only). */
  requestHash?: string | null;
}

export interface RecordedOutcome extends Outcome {
  effects: Effect[];
}

export async function findOutcome(sql: Sql | Tx, requestId: string): Promise<RecordedOutcome | null> {
  return (await findOutcomes(sql, [requestId])).get(requestId) ?? null;
}

/** The recorded outcomes of these request ids (those that have one), in one round trip. */
export async function findOutcomes(
  sql: Sql | Tx,
  requestIds: string[],
): Promise<Map<string, RecordedOutcome>> {
  if (requestIds.length === 0) return new Map();
  const rows = await sql<
    {
      request_id: string;
      status_code: number;
      body: Record<string, unknown>;
      effects: Effect[];
      request_hash: string | null;
    }[]
  >`select request_id, status_code, body, effects, request_hash from command_outcomes
    where request_id = any(${requestIds}::text[])`;
  return new Map(
    rows.map((row) => [
      row.request_id,
      { statusCode: row.status_code, body: row.body, effects: row.effects, requestHash: row.request_hash },
    ]),
  );
}

export interface OutcomeRecord {
  requestId: string;
  kind: Command['type'];
  programId: number | null;
  statusCode: number;
  body: Record<string, unknown>;
  effects?: Effect[];
  requestHash?: string | null;
}

/** One command's outcome row and its notification (delivered on commit), in one round trip. */
export async function recordOutcome(tx: Tx, o: OutcomeRecord): Promise<void> {
  await recordOutcomes(tx, [o]);
}

/**
 * Records the outcomes of a chunk with one statement (an array per column, so the statement and its plan
 * do not depend on the count) and announces each on commit. A request_id recorded already (or twice in
 * the chunk) fails the statement with command_outcomes_pkey: a redelivery, which the careful pass handles.
 */
export async function recordOutcomes(tx: Tx, outcomes: OutcomeRecord[]): Promise<void> {
  if (outcomes.length === 0) return;
  const col = <T>(f: (o: OutcomeRecord) => T) => outcomes.map(f);
  await tx`
    with o as (
      insert into command_outcomes (request_id, kind, program_id, status_code, body, effects, request_hash)
      select r, k, p, s, b::jsonb, e::jsonb, h
      from unnest(${col((o) => o.requestId)}::text[], ${col((o) => o.kind)}::text[],
                  ${col((o) => o.programId)}::bigint[], ${col((o) => o.statusCode)}::int[],
                  ${col((o) => JSON.stringify(o.body))}::text[], ${col((o) => JSON.stringify(o.effects ?? []))}::text[],
                  ${col((o) => o.requestHash ?? null)}::text[])
        as v(r, k, p, s, b, e, h)
      returning request_id
    )
    select count(pg_notify(${OUTCOME_CHANNEL}, n.payload))
    from o join unnest(${col((o) => o.requestId)}::text[],
                       ${col((o) => notificationPayload(o.requestId, o))}::text[]) as n(r, payload)
      on n.r = o.request_id`;
}

function notificationPayload(requestId: string, outcome: Outcome): string {
  const payload = JSON.stringify({
    r: requestId,
    s: outcome.statusCode,
    b: outcome.body,
    h: outcome.requestHash ?? null,
  });
  // NOTIFY payloads stop at 8000 bytes: a larger answer is announced by id and read by the waiter.
  return Buffer.byteLength(payload) > 7900 ? JSON.stringify({ r: requestId }) : payload;
}

/** Also used on redelivery, for a waiter that may have missed the first notification. */
export async function notifyOutcome(sql: Sql | Tx, requestId: string, outcome: Outcome): Promise<void> {
  await notifyOutcomes(sql, new Map([[requestId, outcome]]));
}

/** notifyOutcome for several redelivered commands, in one round trip. */
export async function notifyOutcomes(sql: Sql | Tx, outcomes: Map<string, Outcome>): Promise<void> {
  if (outcomes.size === 0) return;
  const payloads = [...outcomes].map(([requestId, o]) => notificationPayload(requestId, o));
  await sql`select count(pg_notify(${OUTCOME_CHANNEL}, p)) from unnest(${payloads}::text[]) p`;
}

interface Waiter {
  resolve: (o: Outcome | null) => void;
  since: number;
  timer: NodeJS.Timeout;
}

export class OutcomeWaiter {
  /** Several requests may wait on one request_id (retries carrying the same Idempotency-Key). */
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly sql: Sql;
  private readonly log: Logger;
  private readonly pollMs: number;
  private polling: RunningTask | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  readonly stats = { notified: 0, polled: 0, timedOut: 0 };
  /** While Postgres is down the poll fails every OUTCOME_POLL_MS: one line every few seconds. */
  private readonly pollWarning = outageWarning();

  constructor(sql: Sql, log: Logger, opts: { pollMs: number }) {
    this.sql = sql;
    this.log = log;
    this.pollMs = opts.pollMs;
  }

  async start(): Promise<void> {
    const sub = await this.sql.listen(OUTCOME_CHANNEL, (payload) => this.onNotify(payload));
    this.unlisten = sub.unlisten;
    this.polling = startPeriodic(
      {
        name: 'outcome poll',
        intervalMs: this.pollMs,
        delayFirst: true,
        run: () =>
          this.poll()
            .catch((err: unknown) => this.pollWarning(this.log, err, 'outcome poll failed'))
            .then(() => false),
      },
      this.log,
    );
  }

  /** Waits for the poll in hand, then ends every wait (null) and stops listening. */
  async stop(): Promise<void> {
    await this.polling?.stop();
    this.polling = null;
    for (const set of this.waiters.values()) {
      for (const w of set) {
        clearTimeout(w.timer);
        w.resolve(null);
      }
    }
    this.waiters.clear();
    // The listening connection may already be gone (Postgres stopping first): nothing left to undo.
    await this.unlisten?.().catch((err: unknown) => this.log.debug({ err }, 'unlisten failed'));
  }

  /** Resolves with the outcome, or null when the deadline passes first. Register before producing. */
  wait(requestId: string, deadlineMs: number): { promise: Promise<Outcome | null>; cancel(): void } {
    let waiter!: Waiter;
    const promise = new Promise<Outcome | null>((resolve) => {
      const timer = setTimeout(() => {
        this.remove(requestId, waiter);
        this.stats.timedOut++;
        resolve(null);
      }, deadlineMs);
      waiter = { resolve, since: Date.now(), timer };
    });
    let set = this.waiters.get(requestId);
    if (!set) this.waiters.set(requestId, (set = new Set()));
    set.add(waiter);
    return {
      promise,
      cancel: () => {
        clearTimeout(waiter.timer);
        this.remove(requestId, waiter);
        waiter.resolve(null);
      },
    };
  }

  get waiting(): number {
    return this.waiters.size;
  }

  private remove(requestId: string, w: Waiter): void {
    const set = this.waiters.get(requestId);
    if (!set) return;
    set.delete(w);
    if (set.size === 0) this.waiters.delete(requestId);
  }

  private settle(requestId: string, outcome: Outcome): boolean {
    const set = this.waiters.get(requestId);
    if (!set) return false;
    this.waiters.delete(requestId);
    for (const w of set) {
      clearTimeout(w.timer);
      w.resolve(outcome);
    }
    return true;
  }

  private onNotify(payload: string): void {
    let m: { r?: string; s?: number; b?: Record<string, unknown>; h?: string | null };
    try {
      m = JSON.parse(payload) as typeof m;
    } catch {
      return;
    }
    if (!m.r || !this.waiters.has(m.r)) return;
    if (typeof m.s === 'number' && m.b) {
      if (this.settle(m.r, { statusCode: m.s, body: m.b, requestHash: m.h ?? null })) this.stats.notified++;
    } else {
      const id = m.r;
      findOutcome(this.sql, id)
        .then((o) => o && this.settle(id, o) && this.stats.notified++)
        .catch((err: unknown) => this.log.warn({ err }, 'outcome read failed'));
    }
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    const due = [...this.waiters.entries()]
      .filter(([, set]) => [...set].some((w) => now - w.since >= this.pollMs))
      .map(([id]) => id);
    if (due.length === 0) return;
    const rows = await this.sql<
      {
        request_id: string;
        status_code: number;
        body: Record<string, unknown>;
        request_hash: string | null;
      }[]
    >`select request_id, status_code, body, request_hash from command_outcomes where request_id = any(${due})`;
    for (const r of rows) {
      const outcome = { statusCode: r.status_code, body: r.body, requestHash: r.request_hash };
      if (this.settle(r.request_id, outcome)) this.stats.polled++;
    }
  }
}
