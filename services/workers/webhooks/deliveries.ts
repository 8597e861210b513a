// The webhook deliveries (0016_webhooks.sql) as a delivery queue's store (shared/delivery/queue.ts; docs/
// webhooks.md "Delivery and retries"). A claim takes due rows a few per endpoint at a time (at most
// WEBHOOK_ENDPOINT_CONCURRENCY less those the worker has in flight there), and leases them: next_attempt_at
// past the attempt's timeout and a lease_id, the claim's token. A delivery stays `pending` while it waits and
// while it is attempted; an attempt is counted when its result is recorded, with its row in webhook_attempts.
// The same transaction keeps each endpoint's health: an answer clears failing_since, a batch of only
// failures starts it, and an endpoint failing for WEBHOOK_DISABLE_AFTER (or answering 410 Gone) is disabled,
// with a notification and a mail to its workspace.
import { randomUUID } from 'node:crypto';
import { boolArray } from '../../../shared/db/sql.ts';
import type { Sql, Tx } from '../../../shared/db/sql.ts';
import type { Logger } from '../../../shared/logger.ts';
import type { Config } from '../../../shared/config.ts';
import { queueNotifications } from '../../../shared/db/notifications.ts';
import type { NotificationInput } from '../../../shared/db/notifications.ts';
import type { Job } from '../../../shared/delivery/outcome.ts';
import type { DeliveryStore, Result } from '../../../shared/delivery/queue.ts';
import type { AttemptResult, WebhookDelivery } from './send.ts';

type Recorded = Result<WebhookDelivery, AttemptResult>;

interface Claimed extends WebhookDelivery {
  id: string;
  attempts: number;
  once: boolean;
  event_created_at: Date;
}

const STATUS = { delivered: 'delivered', retry: 'pending', failed: 'failed' } as const;

export function createDeliveryStore(deps: {
  sql: Sql;
  log: Logger;
  cfg: Pick<Config, 'webhooks' | 'kafkaPrefix' | 'publicUrl'>;
}): DeliveryStore<WebhookDelivery, AttemptResult> {
  const { sql, log, cfg } = deps;
  const w = cfg.webhooks;

  /**
   * An answer clears the endpoint's failing_since; a batch of only failures starts it (if unset). An endpoint
   * failing since longer than the window, or answering 410, is disabled, and its workspace notified.
   */
  async function endpointHealth(tx: Tx, done: Recorded[], now: Date): Promise<number> {
    const success = (r: Recorded) => r.outcome.type === 'delivered';
    const ok = new Set(done.filter(success).map((r) => r.job.key!));
    const failing = [...new Set(done.filter((r) => !success(r)).map((r) => r.job.key!))].filter(
      (id) => !ok.has(id),
    );
    const gone = [
      ...new Set(done.filter((r) => r.outcome.type === 'failed' && r.outcome.gone).map((r) => r.job.key!)),
    ];
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
    if (failing.length === 0 && gone.length === 0) return 0;
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
    if (off.length === 0) return 0;
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
    return off.length;
  }

  return {
    // Due rows of enabled endpoints, oldest first, at most the endpoint's free slots each.
    async claim(limit, leaseMs, busy) {
      const held = [...busy.entries()];
      const lease = randomUUID();
      const rows = await sql<Claimed[]>`
        with picked as (
          select x.id from webhook_endpoints e
          left join unnest(${held.map(([id]) => id)}::bigint[], ${held.map(([, n]) => n)}::int[]) as b(endpoint_id, n)
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
          limit ${limit}
        ), claimed as (
          update webhook_deliveries d
          set next_attempt_at = now() + ${leaseMs}::int * interval '1 millisecond', lease_id = ${lease}
          from picked where d.id = picked.id
          returning d.id, d.webhook_id, d.endpoint_id, d.workspace_id, d.type, d.attempts, d.once, d.event_id
        )
        select c.id, c.webhook_id, c.endpoint_id, c.workspace_id, c.type, c.attempts, c.once,
               ev.payload as body, ev.created_at as event_created_at, e.url, e.secret,
               case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret
        from claimed c
        join webhook_events ev on ev.id = c.event_id
        join webhook_endpoints e on e.id = c.endpoint_id`;
      return rows.map(({ id, attempts, once, event_created_at, ...delivery }): Job<WebhookDelivery> => ({
        id,
        token: lease,
        attempt: attempts + 1,
        once,
        key: delivery.endpoint_id,
        createdAt: new Date(event_created_at),
        payload: delivery,
        logFields: { endpoint: Number(delivery.endpoint_id), type: delivery.type },
      }));
    },

    async record(tx, results) {
      const released = results.filter((r) => r.outcome.type === 'released');
      const done = results.filter((r) => r.outcome.type !== 'released');
      const ids = new Set<string>();
      if (released.length > 0) {
        const rows = await tx<{ id: string }[]>`
          update webhook_deliveries d set next_attempt_at = now(), lease_id = null
          from unnest(${released.map((r) => r.job.id)}::bigint[], ${released.map((r) => r.job.token)}::uuid[]) as v(id, lease)
          where d.id = v.id and d.lease_id = v.lease
          returning d.id`;
        for (const r of rows) ids.add(String(r.id));
      }
      if (done.length === 0) return ids;
      const col = <T>(fn: (r: Recorded) => T) => done.map(fn);
      const statusOf = (r: Recorded) => STATUS[r.outcome.type as keyof typeof STATUS];
      const errorOf = (r: Recorded) =>
        r.outcome.type === 'retry' || r.outcome.type === 'failed' ? r.outcome.error.slice(0, 1000) : null;
      // Only the claim's owner records (lease_id): a row whose lease expired and was claimed again is the
      // other worker's now. An attempt that was not made (none left) has no row in webhook_attempts.
      const recorded = await tx<{ id: string }[]>`
        with v as (
          select * from unnest(
            ${col((r) => r.job.id)}::bigint[], ${col((r) => r.job.token)}::uuid[], ${col(statusOf)}::text[],
            ${col((r) => (r.outcome.type === 'retry' ? r.outcome.delayMs : null))}::float8[],
            ${col((r) => r.detail?.statusCode ?? null)}::int[], ${col(errorOf)}::text[],
            ${col((r) => r.detail?.response ?? null)}::text[], ${col((r) => r.at.toISOString())}::timestamptz[],
            ${col((r) => r.detail?.durationMs ?? null)}::int[], ${boolArray(col((r) => r.detail !== null))}::text[]::bool[]
          ) as v(id, lease, status, delay_ms, code, error, response, at, duration_ms, attempted)
        ), updated as (
          update webhook_deliveries d set
            status = v.status, attempts = d.attempts + case when v.attempted then 1 else 0 end,
            next_attempt_at = case when v.status = 'pending'
                                   then now() + v.delay_ms * interval '1 millisecond' end,
            lease_id = null, once = false, last_status_code = v.code, last_error = v.error,
            last_response = v.response, last_attempt_at = v.at,
            delivered_at = case when v.status = 'delivered' then now() else d.delivered_at end
          from v where d.id = v.id and d.lease_id = v.lease
          returning d.id
        ), logged as (
          insert into webhook_attempts (delivery_id, attempted_at, duration_ms, status_code, error, response)
          select v.id, v.at, v.duration_ms, v.code, v.error, v.response
          from v join updated u on u.id = v.id where v.attempted
        )
        select id from updated`;
      for (const r of recorded) ids.add(String(r.id));
      return ids;
    },

    async settle(tx, recorded) {
      const done = recorded.filter((r) => r.outcome.type !== 'released');
      return { disabled: done.length > 0 ? await endpointHealth(tx, done, new Date()) : 0 };
    },
  };
}
