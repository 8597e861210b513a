// The one delivery queue: everything that leaves svc with retries (mail over SMTP, webhooks over HTTP) is a
// row of a table that holds its own retry state, and this loop delivers it. A periodic task claims due rows
// through the queue's store (`for update skip locked`, so workers on several machines share them without
// waiting on each other), at most `concurrency` at once and `keyConcurrency` per key (a webhook endpoint), so
// one slow receiver cannot take every slot. A claim is a lease: a worker killed mid-attempt leaves its rows
// due again once the lease has passed, and only the claim's token may record a result. Each answer becomes an
// outcome (outcome.ts): delivered, retried after the schedule's next wait with jitter, or the dead end, where
// the store does what its table's dead end means (a notice to the advertiser, an endpoint disabled). Results
// are recorded in batches, one transaction each, as soon as the one before committed; a slot stays taken
// until its result is recorded, so what a crash can leave unrecorded is at most what was in flight. On
// shutdown, attempts in flight get a grace period, then are cut off and released (due again at once, the
// attempt not counted). Why one queue and separate tables: docs/architecture.md "Delivery".
import { Counter, Histogram } from 'prom-client';
import type { Sql, Tx } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import type { PeriodicTask, RunningTask } from '../pipeline/periodic.ts';
import { outageWarning } from '../pipeline/dependencies.ts';
import { NO_ATTEMPTS_LEFT, attemptsLeft, decide } from './outcome.ts';
import type { Attempted, Job, Outcome, RetryPolicy } from './outcome.ts';

/** One attempt's result, as the store records it. */
export interface Result<P, D> {
  job: Job<P>;
  outcome: Outcome;
  /** When the attempt started. */
  at: Date;
  /** What the transport reported beyond the outcome (an HTTP answer for the attempt log); null: no attempt. */
  detail: D | null;
}

/** The queue's table: one per kind of delivery (mail_log, webhook_deliveries). */
export interface DeliveryStore<P, D> {
  /**
   * Claims up to `limit` due jobs that no other worker holds, at most `keyConcurrency` less `busy` per key,
   * and leases them for `leaseMs`.
   */
  claim(limit: number, leaseMs: number, busy: ReadonlyMap<string, number>): Promise<Job<P>[]>;
  /**
   * Records the results whose claim still holds (its token), in `tx`: delivered, due again after a retry's
   * delay, failed, or released (due now, the attempt not counted). Returns the ids it recorded.
   */
  record(tx: Tx, results: Result<P, D>[]): Promise<Set<string>>;
  /**
   * What the recorded results mean beyond their rows, in the same transaction: the dead end's notice, an
   * endpoint's health. Returns figures for the status line (e.g. `{ disabled: 1 }`).
   */
  settle?(tx: Tx, recorded: Result<P, D>[]): Promise<Record<string, number>>;
}

/** How a job leaves the system: SMTP, HTTP. */
export interface Transport<P, D> {
  /** One attempt, bounded by the transport's own timeout, cut off when `signal` aborts. Never throws. */
  send(job: Job<P>, at: Date, signal: AbortSignal): Promise<Attempted<D>>;
  close(): void;
}

export interface QueueDefinition<P, D> {
  /** The `queue` label of the metrics and the log lines: `mail`, `webhooks`. */
  name: string;
  store: DeliveryStore<P, D>;
  transport: Transport<P, D>;
  policy: RetryPolicy;
  /** Attempts in flight per worker. */
  concurrency: number;
  /** A claim's lease: longer than an attempt may take. */
  leaseMs: number;
  /** How often the worker looks for due jobs besides its wake-ups. */
  pollMs: number;
  /** On shutdown, how long attempts in flight may finish before they are cut off and released. */
  graceMs: number;
  /** A Postgres NOTIFY channel that makes jobs due (an API retry): the queue claims at once. */
  wakeOn?: string;
  random?: () => number;
}

export interface QueueDeps {
  sql: Sql;
  log: Logger;
  periodic(task: PeriodicTask): RunningTask;
}

const OUTCOMES = ['delivered', 'retrying', 'failed', 'gone'] as const;
type Counted = (typeof OUTCOMES)[number];

const attemptsTotal = new Counter({
  name: 'svc_delivery_attempts_total',
  help: 'Delivery attempts by queue (mail, webhooks) and what they led to: delivered, retrying, failed (the dead end), gone (HTTP 410)',
  labelNames: ['queue', 'outcome'] as const,
  registers: [],
});
const deliverySeconds = new Histogram({
  name: 'svc_delivery_seconds',
  help: 'From the change (the mail queued, the event) to its delivery being acknowledged, per delivered job',
  labelNames: ['queue'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 36_000, 172_800],
  registers: [],
});

const counted = (o: Outcome): Counted | null =>
  o.type === 'delivered'
    ? 'delivered'
    : o.type === 'retry'
      ? 'retrying'
      : o.type === 'failed'
        ? o.gone
          ? 'gone'
          : 'failed'
        : null;

export interface DeliveryQueue {
  /** Claims now (or right after the round in hand): new jobs, a freed slot. */
  wake(): void;
  metrics: [Counter<'queue' | 'outcome'>, Histogram<'queue'>];
  /** Figures since the last call, or null when idle. */
  status(): Record<string, number> | null;
  /** Shutdown, after the claiming task stopped: the grace, the cut-off, every result recorded. */
  close(): Promise<void>;
}

export async function startDeliveryQueue<P, D>(
  deps: QueueDeps,
  def: QueueDefinition<P, D>,
): Promise<DeliveryQueue> {
  const { sql, log } = deps;
  const { store, transport, policy } = def;
  const random = def.random ?? Math.random;
  const warn = outageWarning();
  /** Attempts under way, by job id. */
  const attempts = new Map<string, Promise<void>>();
  /** Slots: jobs claimed and not yet recorded, by id, with their key. */
  const held = new Map<string, string | null>();
  const perKey = new Map<string, number>();
  let finished: Result<P, D>[] = [];
  let flushing: Promise<void> | null = null;
  let stopping = false;
  const shutdown = new AbortController();
  const figures: Record<string, number> = {};
  const add = (k: string, n = 1) => (figures[k] = (figures[k] ?? 0) + n);
  for (const outcome of OUTCOMES) attemptsTotal.inc({ queue: def.name, outcome }, 0);

  /** One round: claims what is due within the free slots and starts those attempts; true when more waits. */
  async function claim(): Promise<boolean> {
    const room = def.concurrency - held.size;
    if (room <= 0 || stopping) return false;
    const jobs = await store.claim(room, def.leaseMs, perKey);
    for (const job of jobs) start(job);
    return jobs.length === room;
  }

  function start(job: Job<P>): void {
    held.set(job.id, job.key);
    if (job.key !== null) perKey.set(job.key, (perKey.get(job.key) ?? 0) + 1);
    const at = new Date();
    // Not made: the job was past its last attempt when claimed; answered, so that it is never released.
    const answer: Promise<Attempted<D | null>> = attemptsLeft(policy, job)
      ? transport.send(job, at, shutdown.signal).catch((err: unknown): Attempted<null> => ({
          type: 'failed',
          error: err instanceof Error ? err.message : String(err),
          answered: false,
          detail: null,
        }))
      : Promise.resolve({ type: 'failed', error: NO_ATTEMPTS_LEFT, answered: true, detail: null });
    const attempt = answer
      .then((a) => {
        const outcome = decide(policy, job, a, shutdown.signal.aborted, random());
        finished.push({ job, outcome, at, detail: a.detail });
      })
      .finally(() => {
        attempts.delete(job.id);
        scheduleFlush();
      });
    attempts.set(job.id, attempt);
  }

  function free(job: Job<P>): void {
    held.delete(job.id);
    if (job.key === null) return;
    const n = (perKey.get(job.key) ?? 1) - 1;
    if (n <= 0) perKey.delete(job.key);
    else perKey.set(job.key, n);
  }

  function scheduleFlush(): void {
    if (flushing !== null || finished.length === 0) return;
    flushing = flush()
      .catch((err: unknown) => {
        // Postgres away: the results stay queued and are written when it answers; their leases keep other
        // workers off the rows meanwhile (past them, a job is attempted again: at least once).
        warn(log, err, `${def.name}: recording delivery results failed; retrying`);
        return new Promise<void>((r) => setTimeout(r, 500));
      })
      .finally(() => {
        flushing = null;
        scheduleFlush();
      });
  }

  /** Records every finished attempt waiting, in one transaction; then frees their slots. */
  async function flush(): Promise<void> {
    const batch = finished;
    finished = [];
    let recorded: Result<P, D>[] = [];
    let settled: Record<string, number> = {};
    try {
      await sql.begin(async (tx) => {
        const ids = await store.record(tx, batch);
        recorded = batch.filter((r) => ids.has(r.job.id));
        settled = (await store.settle?.(tx, recorded)) ?? {};
      });
    } catch (err) {
      finished = batch.concat(finished);
      throw err;
    }
    const now = Date.now();
    for (const r of recorded) count(r, now);
    for (const [k, n] of Object.entries(settled)) add(k, n);
    for (const r of batch) free(r.job);
    task.wake();
  }

  function count(r: Result<P, D>, now: number): void {
    const outcome = counted(r.outcome);
    if (outcome === null) {
      add('released');
      return;
    }
    add(outcome);
    attemptsTotal.inc({ queue: def.name, outcome });
    if (r.outcome.type === 'delivered')
      deliverySeconds.observe({ queue: def.name }, Math.max(0, now - r.job.createdAt.getTime()) / 1000);
    if (r.outcome.type === 'failed')
      log.warn(
        {
          queue: def.name,
          id: r.job.id,
          attempts: r.job.attempt,
          error: r.outcome.error,
          ...r.job.logFields,
        },
        'delivery failed for good (the dead end)',
      );
  }

  const task = deps.periodic({ name: `${def.name} delivery`, intervalMs: def.pollMs, run: claim });
  if (def.wakeOn !== undefined) {
    await sql
      .listen(def.wakeOn, () => task.wake())
      .catch((err: unknown) => log.warn({ err }, `${def.name}: LISTEN ${def.wakeOn} failed; polling only`));
  }

  return {
    wake: () => task.wake(),
    metrics: [attemptsTotal, deliverySeconds],
    status() {
      const busy = attempts.size;
      if (Object.values(figures).every((n) => n === 0) && busy === 0) return null;
      const s = { ...figures, inFlight: busy };
      for (const k of Object.keys(figures)) delete figures[k];
      return s;
    },
    async close() {
      stopping = true;
      const all = () => Promise.allSettled([...attempts.values()]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all(), new Promise((r) => (timer = setTimeout(r, def.graceMs)))]);
      clearTimeout(timer);
      shutdown.abort();
      await all();
      for (let i = 0; i < 10 && (finished.length > 0 || flushing !== null); i++) {
        await flushing;
        if (finished.length > 0) await flush().catch(() => {});
      }
      transport.close();
    },
  };
}
