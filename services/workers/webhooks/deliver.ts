// The deliverer: attempts due deliveries and records what happened, with every retry held in Postgres
// (docs/webhooks.md "Retries"). A periodic task claims due rows `for update skip locked` (workers on several
// machines share them without waiting for each other) a few per endpoint at a time, so one slow or dead
// receiver cannot take every slot; a claim moves next_attempt_at past the attempt's timeout (the lease), so a
// worker killed mid-attempt leaves the row due again once the lease has passed, with the same webhook-id.
// Results are recorded in batches, one transaction per batch: the delivery's new state, the attempt's log
// row, the endpoint's health, and, when an endpoint has failed every attempt for the failure window (or
// answered 410 Gone), its disabling with a notification and a mail to the workspace.
import { randomUUID } from 'node:crypto';
import { Counter, Histogram } from 'prom-client';
import type { Sql, Tx } from '../../../shared/db/sql.ts';
import type { Logger } from '../../../shared/logger.ts';
import type { Config } from '../../../shared/config.ts';
import { queueNotifications } from '../../../shared/db/notifications.ts';
import type { NotificationInput } from '../../../shared/db/notifications.ts';
import { signedHeaders } from '../../../shared/webhooks/signature.ts';
import { nextDelayMs, retryAfterMs } from '../../../shared/webhooks/schedule.ts';
import type { AttemptResult, Sender } from './send.ts';

interface Claimed {
  id: string;
  webhook_id: string;
  endpoint_id: string;
  workspace_id: string;
  type: string;
  attempts: number;
  once: boolean;
  payload: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  event_created_at: Date;
}

interface Finished {
  row: Claimed;
  lease: string;
  at: Date;
  result: AttemptResult;
  /** The worker was shutting down: the attempt is not counted and the row is due again at once. */
  released: boolean;
}

/** What a finished attempt does to its delivery. */
export interface Decision {
  status: 'pending' | 'delivered' | 'failed';
  /** When pending: the next attempt's time. */
  nextAttemptAt: Date | null;
  /** The receiver answered 410 Gone: the endpoint is disabled (Standard Webhooks). */
  gone: boolean;
  /** Whether the attempt counts as a success for the endpoint's health. */
  success: boolean;
}

/** The rules of one attempt's outcome, pure (test/unit/webhook-delivery-rules.test.ts). */
export function decide(
  schedule: readonly number[],
  attemptsBefore: number,
  once: boolean,
  result: Pick<AttemptResult, 'statusCode' | 'retryAfter'>,
  now: Date,
  random = Math.random(),
): Decision {
  const code = result.statusCode;
  if (code !== null && code >= 200 && code < 300)
    return { status: 'delivered', nextAttemptAt: null, gone: false, success: true };
  if (code === 410) return { status: 'failed', nextAttemptAt: null, gone: true, success: false };
  const delay = once
    ? null
    : nextDelayMs(
        schedule,
        attemptsBefore + 1,
        code === null ? null : retryAfterMs(code, result.retryAfter),
        random,
      );
  if (delay === null) return { status: 'failed', nextAttemptAt: null, gone: false, success: false };
  return { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay), gone: false, success: false };
}

export interface DelivererDeps {
  sql: Sql;
  log: Logger;
  cfg: Pick<Config, 'webhooks' | 'kafkaPrefix' | 'publicUrl'>;
  sender: Sender;
}

export function createDeliverer(deps: DelivererDeps) {
  const { sql, log, cfg, sender } = deps;
  const w = cfg.webhooks;
  // Past the attempt's own bound, with room for a slow flush: a live worker's claim never expires under it.
  const leaseMs = w.timeoutMs + 30_000;
  const inFlight = new Map<string, Promise<void>>();
  const perEndpoint = new Map<string, number>();
  let finished: Finished[] = [];
  let flushing: Promise<void> | null = null;
  const shutdown = new AbortController();
  let wake = () => {};
  const counts = { delivered: 0, retrying: 0, failed: 0, released: 0, disabled: 0 };

  const attempts = new Counter({
    name: 'svc_webhook_attempts_total',
    help: 'Webhook delivery attempts by what they led to',
    labelNames: ['outcome'],
    registers: [],
  });
  const lag = new Histogram({
    name: 'svc_webhook_delivery_seconds',
    help: 'From the change (the event) to its delivery being acknowledged, per delivered webhook',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 36_000, 172_800],
    registers: [],
  });

  /** One round: claims what is due (within the free slots) and starts those attempts; true when more waits. */
  async function claim(): Promise<boolean> {
    const room = w.concurrency - inFlight.size;
    if (room <= 0 || shutdown.signal.aborted) return false;
    const busy = [...perEndpoint.entries()].filter(([, n]) => n > 0);
    const lease = randomUUID();
    const rows = await sql<Claimed[]>`
      with picked as (
        select x.id from webhook_endpoints e
        left join unnest(${busy.map(([id]) => id)}::bigint[], ${busy.map(([, n]) => n)}::int[]) as b(endpoint_id, n)
          on b.endpoint_id = e.id
        cross join lateral (
          select d.id, d.next_attempt_at from webhook_deliveries d
          where d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= now()
          order by d.next_attempt_at
          limit greatest(0, ${w.endpointConcurrency}::int - coalesce(b.n, 0))
          for update of d skip locked
        ) x
        where e.status = 'enabled'
        order by x.next_attempt_at
        limit ${room}
      ), claimed as (
        update webhook_deliveries d
        set next_attempt_at = now() + ${leaseMs}::int * interval '1 millisecond', lease_id = ${lease}
        from picked where d.id = picked.id
        returning d.id, d.webhook_id, d.endpoint_id, d.workspace_id, d.type, d.attempts, d.once, d.event_id
      )
      select c.id, c.webhook_id, c.endpoint_id, c.workspace_id, c.type, c.attempts, c.once, ev.payload,
             ev.created_at as event_created_at, e.url, e.secret,
             case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret
      from claimed c
      join webhook_events ev on ev.id = c.event_id
      join webhook_endpoints e on e.id = c.endpoint_id`;
    for (const row of rows) start(row, lease);
    return rows.length === room;
  }

  function start(row: Claimed, lease: string): void {
    perEndpoint.set(row.endpoint_id, (perEndpoint.get(row.endpoint_id) ?? 0) + 1);
    const at = new Date();
    const secrets = row.previous_secret === null ? [row.secret] : [row.secret, row.previous_secret];
    const headers = signedHeaders(secrets, row.webhook_id, at, row.payload);
    const attempt = sender
      .send(row.url, headers, row.payload, shutdown.signal)
      .then((result) => {
        finished.push({
          row,
          lease,
          at,
          result,
          released: shutdown.signal.aborted && result.statusCode === null,
        });
      })
      .finally(() => {
        inFlight.delete(row.id);
        const n = (perEndpoint.get(row.endpoint_id) ?? 1) - 1;
        if (n <= 0) perEndpoint.delete(row.endpoint_id);
        else perEndpoint.set(row.endpoint_id, n);
        scheduleFlush();
        wake();
      });
    inFlight.set(row.id, attempt);
  }

  function scheduleFlush(): void {
    if (flushing !== null || finished.length === 0) return;
    flushing = flush()
      .catch((err: unknown) => {
        // Postgres away: the results stay queued and are written when it answers; their leases keep
        // other workers off the rows meanwhile (past them, a row is attempted again: at least once).
        log.warn({ err: (err as Error).message }, 'recording webhook attempts failed; retrying');
        return new Promise<void>((r) => setTimeout(r, 500));
      })
      .finally(() => {
        flushing = null;
        scheduleFlush();
      });
  }

  /** Records every finished attempt waiting, in one transaction. */
  async function flush(): Promise<void> {
    const batch = finished;
    finished = [];
    try {
      await sql.begin((tx) => record(tx, batch));
    } catch (err) {
      finished = batch.concat(finished);
      throw err;
    }
  }

  async function record(tx: Tx, batch: Finished[]): Promise<void> {
    const now = new Date();
    const released = batch.filter((f) => f.released);
    const done = batch.filter((f) => !f.released);
    if (released.length > 0) {
      counts.released += released.length;
      await tx`
        update webhook_deliveries d set next_attempt_at = now(), lease_id = null
        from unnest(${released.map((f) => f.row.id)}::bigint[], ${released.map((f) => f.lease)}::uuid[]) as v(id, lease)
        where d.id = v.id and d.lease_id = v.lease`;
    }
    if (done.length === 0) return;
    const decisions = done.map((f) => decide(w.retryScheduleMs, f.row.attempts, f.row.once, f.result, now));
    const col = <T>(fn: (f: Finished, d: Decision) => T) => done.map((f, i) => fn(f, decisions[i]!));
    const errorOf = (f: Finished) =>
      f.result.error ?? (f.result.statusCode !== null ? `HTTP ${f.result.statusCode}` : 'failed');
    // Only the claim's owner records (lease_id): a row whose lease expired and was claimed again is the
    // other worker's now.
    const recorded = await tx<{ id: string }[]>`
      with v as (
        select * from unnest(
          ${col((f) => f.row.id)}::bigint[], ${col((f) => f.lease)}::uuid[], ${col((_, d) => d.status)}::text[],
          ${col((_, d) => d.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
          ${col((f) => f.result.statusCode)}::int[],
          ${col((f, d) => (d.status === 'delivered' ? null : errorOf(f).slice(0, 1000)))}::text[],
          ${col((f) => f.result.response)}::text[], ${col((f) => f.at.toISOString())}::timestamptz[],
          ${col((f) => f.result.durationMs)}::int[]
        ) as v(id, lease, status, next_at, code, error, response, at, duration_ms)
      ), updated as (
        update webhook_deliveries d set
          status = v.status, attempts = d.attempts + 1, next_attempt_at = v.next_at, lease_id = null,
          once = false, last_status_code = v.code, last_error = v.error, last_response = v.response,
          last_attempt_at = v.at,
          delivered_at = case when v.status = 'delivered' then now() else d.delivered_at end
        from v where d.id = v.id and d.lease_id = v.lease
        returning d.id
      )
      insert into webhook_attempts (delivery_id, attempted_at, duration_ms, status_code, error, response)
      select v.id, v.at, v.duration_ms, v.code, v.error, v.response from v join updated u on u.id = v.id
      returning delivery_id as id`;
    const mine = new Set(recorded.map((r) => r.id));
    const kept = done.map((f, i) => ({ f, d: decisions[i]! })).filter(({ f }) => mine.has(f.row.id));
    for (const { f, d } of kept) {
      const outcome = d.status === 'delivered' ? 'delivered' : d.status === 'pending' ? 'retrying' : 'failed';
      counts[outcome]++;
      attempts.inc({ outcome: d.gone ? 'gone' : outcome });
      if (d.status === 'delivered')
        lag.observe(Math.max(0, now.getTime() - new Date(f.row.event_created_at).getTime()) / 1000);
    }
    await endpointHealth(tx, kept, now);
  }

  /**
   * An answer clears the endpoint's failing_since; a batch of only failures starts it (if unset). An endpoint
   * failing since longer than the window, or answering 410, is disabled, and its workspace notified.
   */
  async function endpointHealth(tx: Tx, kept: { f: Finished; d: Decision }[], now: Date): Promise<void> {
    const ok = new Set(kept.filter(({ d }) => d.success).map(({ f }) => f.row.endpoint_id));
    const failing = [...new Set(kept.filter(({ d }) => !d.success).map(({ f }) => f.row.endpoint_id))].filter(
      (id) => !ok.has(id),
    );
    const gone = [...new Set(kept.filter(({ d }) => d.gone).map(({ f }) => f.row.endpoint_id))];
    if (ok.size > 0) {
      await tx`
        update webhook_endpoints set failing_since = null
        where id = any(${[...ok]}::bigint[]) and failing_since is not null`;
    }
    if (failing.length > 0) {
      await tx`
        update webhook_endpoints set failing_since = ${now.toISOString()}::timestamptz
        where id = any(${failing}::bigint[]) and failing_since is null`;
    }
    if (failing.length === 0 && gone.length === 0) return;
    const since = new Date(now.getTime() - w.disableAfterMs).toISOString();
    const off = await tx<
      { id: string; workspace_id: string; url: string; reason: string; disabled_at: Date }[]
    >`
      update webhook_endpoints set
        status = 'disabled',
        disabled_reason = case when id = any(${gone}::bigint[]) then 'gone' else 'failing' end,
        disabled_at = now(), updated_at = now()
      where status = 'enabled'
        and (id = any(${gone}::bigint[])
             or (id = any(${failing}::bigint[]) and failing_since <= ${since}::timestamptz))
      returning id, workspace_id, url, disabled_reason as reason, disabled_at`;
    if (off.length === 0) return;
    counts.disabled += off.length;
    const days = Math.round((w.disableAfterMs / 86_400_000) * 10) / 10;
    const items: NotificationInput[] = off.map((e) => ({
      notification_key: `webhook-endpoint:${e.id}:disabled:${new Date(e.disabled_at).getTime()}`,
      recipient_type: 'advertiser',
      partner_id: null,
      workspace_id: Number(e.workspace_id),
      program_id: null,
      kind: 'webhook_endpoint_disabled',
      title: 'A webhook endpoint was disabled',
      body:
        e.reason === 'gone'
          ? `${e.url} answered 410 Gone, so svc stopped sending it events. Enable it again in Settings → Webhooks once it should receive them.`
          : `Every delivery to ${e.url} failed for ${days} days, so svc stopped sending it events. Fix the receiver, then enable it again in Settings → Webhooks; pending deliveries resume and failed ones can be retried.`,
      data: { endpoint_id: Number(e.id), url: e.url, reason: e.reason },
      mail: true,
    }));
    await queueNotifications(tx, cfg.kafkaPrefix, items);
    for (const e of off)
      log.warn({ endpoint: Number(e.id), url: e.url, reason: e.reason }, 'webhook endpoint disabled');
  }

  return {
    claim,
    metrics: [attempts, lag],
    /** Called when a slot frees up (the periodic task's wake). */
    onSlotFree(fn: () => void) {
      wake = fn;
    },
    inFlight: () => inFlight.size,
    /** Figures since the last call, or null when idle. */
    status(): Record<string, unknown> | null {
      const s = { ...counts, inFlight: inFlight.size };
      if (Object.values(counts).every((n) => n === 0) && inFlight.size === 0) return null;
      for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] = 0;
      return s;
    },
    /**
     * Shutdown: no new claims; attempts in flight get `graceMs` to finish, then are cut off and their rows
     * released (due again at once, the attempt not counted); every result is recorded before returning.
     */
    async close(graceMs: number): Promise<void> {
      const all = () => Promise.allSettled([...inFlight.values()]);
      await Promise.race([all(), new Promise((r) => setTimeout(r, graceMs))]);
      shutdown.abort();
      await all();
      for (let i = 0; i < 10 && (finished.length > 0 || flushing !== null); i++) {
        await flushing;
        if (finished.length > 0) await flush().catch(() => {});
      }
      sender.close();
    },
  };
}
